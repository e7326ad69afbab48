package graphql_test

import (
	"encoding/json"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/webhooks"
)

// TestLinkedBranches: createLinkedBranch makes a branch in the issue's
// repository or another one the caller pushes to, under the rules of
// POST .../git/refs, with its create and push webhooks (a branch that
// exists, an unknown commit, a ruleset's refusal: UNPROCESSABLE with
// REST's message; Contents write of a fine-grained
// or installation token that selects the repository: FORBIDDEN
// otherwise; a pull request is no issue: NOT_FOUND);
// Issue.linkedBranches lists the links whose repository the caller sees
// (or the token selects); node(id:) resolves a link; a
// renamed branch stays linked under its new name; deleteLinkedBranch
// unlinks (push access) and leaves the branch.
func TestLinkedBranches(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo, bob := env.User("octo"), env.User("bob")
	hello := env.Repo(octo, "hello")
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo", "admin:repo_hook")
	pr := pushFeature(t, env, "hello", token)
	pushFeature(t, env, "secret", token)
	rest := env.Client(token)
	ctx := apptest.Ctx()
	rc := apptest.NewReceiver(t, "s")
	_, _, err := rest.Repositories.CreateHook(ctx, "octo", "hello", &github.Hook{Events: []string{"create", "push"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)
	_, _, err = rest.Repositories.CreateRuleset(ctx, "octo", "hello", github.RepositoryRuleset{
		Name: "No frozen branches", Target: new(github.RulesetTargetBranch), Enforcement: github.RulesetEnforcementActive,
		Conditions: &github.RepositoryRulesetConditions{
			RefName: &github.RepositoryRulesetRefConditionParameters{Include: []string{"refs/heads/frozen-*"}, Exclude: []string{}}},
		Rules: &github.RepositoryRulesetRules{Creation: &github.EmptyRuleParameters{}},
	})
	apptest.Must(t, "ruleset", err)
	is, _, err := rest.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Linked"})
	apptest.Must(t, "issue", err)
	main, _, err := rest.Repositories.GetBranch(ctx, "octo", "hello", "main", 0)
	apptest.Must(t, "main", err)
	oid := main.GetCommit().GetSHA()
	secretRepo, _, err := rest.Repositories.Get(ctx, "octo", "secret")
	apptest.Must(t, "secret", err)
	secretID := secretRepo.GetNodeID()
	secretMain, _, err := rest.Repositories.GetBranch(ctx, "octo", "secret", "main", 0)
	apptest.Must(t, "secret's main", err)

	const create = `mutation($issue: ID!, $oid: GitObjectID!, $name: String, $repo: ID) {
		createLinkedBranch(input: {issueId: $issue, oid: $oid, name: $name, repositoryId: $repo}) {
			issue { number } linkedBranch { id ref { name prefix repository { nameWithOwner } } } } }`
	type payload struct {
		Issue        struct{ Number int }
		LinkedBranch struct {
			ID  string
			Ref struct {
				Name, Prefix string
				Repository   struct{ NameWithOwner string }
			}
		}
	}
	createAs := func(tok string, vars map[string]any) (payload, result) {
		t.Helper()
		vars["issue"] = is.GetNodeID()
		if vars["oid"] == nil {
			vars["oid"] = oid
		}
		r := post(t, env, tok, create, vars)
		var p payload
		if len(r.Errors) == 0 {
			apptest.Must(t, "payload", json.Unmarshal(r.Data["createLinkedBranch"], &p))
		}
		return p, r
	}
	p, r := createAs(token, map[string]any{"name": "work"})
	if len(r.Errors) != 0 || p.Issue.Number != is.GetNumber() || p.LinkedBranch.Ref.Name != "work" || p.LinkedBranch.Ref.Prefix != "refs/heads/" ||
		p.LinkedBranch.Ref.Repository.NameWithOwner != "octo/hello" {
		t.Fatalf("createLinkedBranch: %+v %+v", r, p)
	}
	linkID := p.LinkedBranch.ID
	rc.WaitFor(t, refEvent, "create work", "push refs/heads/work")
	p, r = createAs(token, map[string]any{"name": "elsewhere", "repo": secretID, "oid": secretMain.GetCommit().GetSHA()})
	if len(r.Errors) != 0 || p.LinkedBranch.Ref.Repository.NameWithOwner != "octo/secret" {
		t.Fatalf("createLinkedBranch in another repository: %+v %+v", r, p)
	}

	refused := func(name, tok string, vars map[string]any, typ, msg string) {
		t.Helper()
		_, r := createAs(tok, vars)
		if len(r.Errors) != 1 || r.Errors[0].Type != typ || msg != "" && !strings.Contains(r.Errors[0].Message, msg) ||
			string(r.Data["createLinkedBranch"]) != "null" {
			t.Errorf("%s: %+v, want %s %q", name, r, typ, msg)
		}
	}
	refused("a branch that exists", token, map[string]any{"name": "work"}, "UNPROCESSABLE", "Reference already exists")
	refused("a ruleset's refusal", token, map[string]any{"name": "frozen-1"}, "UNPROCESSABLE",
		`Ruleset "No frozen branches" (id 1): Cannot create ref due to creations being restricted.`)
	refused("an unknown commit", token, map[string]any{"name": "nowhere", "oid": "0123456789012345678901234567890123456789"},
		"UNPROCESSABLE", "Object does not exist")
	refused("a reader", env.Token(bob, "repo"), map[string]any{"name": "bobs"}, "FORBIDDEN",
		"bob does not have the correct permissions to execute `CreateLinkedBranch`")
	refused("a private repository the caller does not see", env.Token(bob, "repo"), map[string]any{"name": "bobs", "repo": secretID},
		"NOT_FOUND", "")
	refused("fine-grained without Contents write", env.FineGrainedToken(octo, octo, apptest.AllRepos, "contents:read,issues:read"),
		map[string]any{"name": "fg"}, "FORBIDDEN", "")
	refused("fine-grained that does not select the repository",
		env.FineGrainedToken(octo, octo, []*repos.Repository{secret}, "contents:write,issues:read"),
		map[string]any{"name": "fg"}, "FORBIDDEN", "")
	_, r = createAs(env.FineGrainedToken(octo, octo, []*repos.Repository{hello}, "contents:write,issues:read"), map[string]any{"name": "fg"})
	if len(r.Errors) != 0 {
		t.Errorf("fine-grained with Contents write: %+v", r)
	}
	refused("an installation token that does not select the repository",
		env.InstallationToken(octo, []*repos.Repository{secret}, "contents:write,issues:read"),
		map[string]any{"name": "inst"}, "FORBIDDEN", "")
	inst := env.InstallationToken(octo, []*repos.Repository{hello}, "contents:write,issues:read")
	if _, r = createAs(inst, map[string]any{"name": "inst"}); len(r.Errors) != 0 {
		t.Errorf("installation token with Contents write: %+v", r)
	}
	r = post(t, env, token, create, map[string]any{"issue": pr.GetNodeID(), "oid": oid, "name": "of-a-pull"})
	if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" {
		t.Errorf("a pull request's id: %+v", r)
	}

	const list = `query($n: Int!) { repository(owner: "octo", name: "hello") { issue(number: $n) {
		linkedBranches(first: 10) { totalCount nodes { id ref { name repository { nameWithOwner } } } } } } }`
	names := func(tok string) []string {
		t.Helper()
		r := post(t, env, tok, list, map[string]any{"n": is.GetNumber()})
		var got struct {
			Issue struct {
				LinkedBranches struct {
					TotalCount int
					Nodes      []struct {
						Ref struct {
							Name       string
							Repository struct{ NameWithOwner string }
						}
					}
				}
			}
		}
		if len(r.Errors) != 0 || json.Unmarshal(r.Data["repository"], &got) != nil {
			t.Fatalf("linkedBranches: %+v", r)
		}
		var out []string
		for _, n := range got.Issue.LinkedBranches.Nodes {
			out = append(out, n.Ref.Repository.NameWithOwner+":"+n.Ref.Name)
		}
		if got.Issue.LinkedBranches.TotalCount != len(out) {
			t.Errorf("linkedBranches: totalCount %d, %d nodes", got.Issue.LinkedBranches.TotalCount, len(out))
		}
		return out
	}
	if got := names(token); !slices.Equal(got, []string{"octo/hello:work", "octo/secret:elsewhere", "octo/hello:fg", "octo/hello:inst"}) {
		t.Errorf("linkedBranches: %v", got)
	}
	for who, tok := range map[string]string{"bob, who does not see octo/secret": env.Token(bob, "repo"), "an installation that does not select it": inst} {
		if got := names(tok); !slices.Equal(got, []string{"octo/hello:work", "octo/hello:fg", "octo/hello:inst"}) {
			t.Errorf("linkedBranches as %s: %v", who, got)
		}
	}

	r = post(t, env, token, `query($id: ID!) { node(id: $id) { __typename ... on LinkedBranch { id ref { name } } } }`, map[string]any{"id": linkID})
	if len(r.Errors) != 0 || string(r.Data["node"]) != `{"__typename":"LinkedBranch","id":"`+linkID+`","ref":{"name":"work"}}` {
		t.Errorf("node(id:) of a linked branch: %+v %s", r, r.Data["node"])
	}

	if resp, body := env.DoJSON("POST", "/repos/octo/hello/branches/work/rename", token, `{"new_name":"renamed"}`); resp.StatusCode != http.StatusCreated {
		t.Fatalf("rename: %d %s", resp.StatusCode, body)
	}
	if got := names(token); !slices.Equal(got, []string{"octo/hello:renamed", "octo/secret:elsewhere", "octo/hello:fg", "octo/hello:inst"}) {
		t.Errorf("linkedBranches after a rename: %v", got)
	}

	const unlink = `mutation($id: ID!) { deleteLinkedBranch(input: {linkedBranchId: $id}) { issue { number } } }`
	r = post(t, env, env.Token(bob, "repo"), unlink, map[string]any{"id": linkID})
	if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
		t.Errorf("deleteLinkedBranch as a reader: %+v", r)
	}
	r = post(t, env, token, unlink, map[string]any{"id": linkID})
	if len(r.Errors) != 0 || string(r.Data["deleteLinkedBranch"]) != `{"issue":{"number":`+strconv.Itoa(is.GetNumber())+`}}` {
		t.Errorf("deleteLinkedBranch: %+v %s", r, r.Data["deleteLinkedBranch"])
	}
	if got := names(token); !slices.Equal(got, []string{"octo/secret:elsewhere", "octo/hello:fg", "octo/hello:inst"}) {
		t.Errorf("linkedBranches after deleteLinkedBranch: %v", got)
	}
	if _, _, err := rest.Repositories.GetBranch(ctx, "octo", "hello", "renamed", 0); err != nil {
		t.Errorf("the unlinked branch: %v", err)
	}
	r = post(t, env, token, unlink, map[string]any{"id": linkID})
	if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" {
		t.Errorf("deleteLinkedBranch again: %+v", r)
	}
}

// refEvent names a create or push delivery by its event and ref.
func refEvent(d apptest.Delivery) string {
	var p struct{ Ref string }
	if json.Unmarshal(d.Body, &p) != nil {
		return ""
	}
	return d.Event + " " + p.Ref
}
