package graphql_test

import (
	"encoding/json"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos/gitjson"
)

// pushHistory pushes to octo/REPO two commits on main (the second with
// a directory and a binary file), a branch "feature" one commit ahead,
// a lightweight tag v1 at the first commit and an annotated tag v2 at
// main, and returns the work tree.
func pushHistory(t *testing.T, env *apptest.Env, repo, token string) string {
	t.Helper()
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
	apptest.Git(t, dir, "tag", "v1")
	apptest.Commit(t, dir, "Add docs\n\nThe guide and a logo.", map[string]string{"docs/guide.md": "Read me.\n", "docs/logo.bin": "\x00\x01\x02"})
	apptest.Git(t, dir, "tag", "-a", "v2", "-m", "Version 2")
	apptest.Git(t, dir, "checkout", "-q", "-b", "feature")
	apptest.Commit(t, dir, "Add a feature", map[string]string{"feature.txt": "new\n"})
	apptest.Git(t, dir, "checkout", "-q", "main")
	apptest.Git(t, dir, "push", "-q", env.GitURL("octo", repo, "octo", token), "main", "feature", "v1", "v2")
	return dir
}

// TestRefsAndObjects queries refs, ref and object on a pushed repository
// and compares them with git's own answers (for-each-ref, rev-parse,
// log, ls-tree, cat-file), and the ids of refs and commits with REST's
// node_id, which node(id:) resolves back.
func TestRefsAndObjects(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	dir := pushHistory(t, env, "hello", token)
	git := func(args ...string) string { return strings.TrimSpace(apptest.Git(t, dir, args...)) }
	ctx := apptest.Ctx()
	rest := env.Client(token)

	var refs struct {
		Repository struct {
			Refs struct {
				TotalCount int
				Nodes      []struct {
					ID, Name, Prefix string
					Target           struct{ Oid string }
				}
			}
		}
	}
	gqlData(t, env, token, `query($owner: String!, $repo: String!) { repository(owner: $owner, name: $repo) {
		refs(refPrefix: "refs/heads/", first: 10) { totalCount nodes { id name prefix target { oid } } } } }`,
		map[string]any{"owner": "octo", "repo": "hello"}, &refs)
	var got []string
	for _, n := range refs.Repository.Refs.Nodes {
		got = append(got, n.Prefix+n.Name+" "+n.Target.Oid)
	}
	if want := strings.Split(git("for-each-ref", "--format=%(refname) %(objectname)", "refs/heads/"), "\n"); !slices.Equal(got, want) ||
		refs.Repository.Refs.TotalCount != len(want) {
		t.Errorf("refs/heads/: %v, want %v", got, want)
	}
	restRef, _, err := rest.Git.GetRef(ctx, "octo", "hello", "heads/main")
	apptest.Must(t, "REST ref", err)
	if refs.Repository.Refs.Nodes[1].ID != restRef.GetNodeID() {
		t.Errorf("main's id %s, REST's %s", refs.Repository.Refs.Nodes[1].ID, restRef.GetNodeID())
	}

	var tags map[string]any
	gqlData(t, env, token, `{ repository(owner: "octo", name: "hello") {
		refs(refPrefix: "refs/tags/", last: 5, query: "v", orderBy: {field: TAG_COMMIT_DATE, direction: DESC}) { nodes { name target { __typename oid } } }
		v1: ref(qualifiedName: "v1") { name prefix }
		main: ref(qualifiedName: "refs/heads/main") { name }
		none: ref(qualifiedName: "nothing") { name } } }`, nil, &tags)
	want := `{"repository":{"main":{"name":"main"},"none":null,"refs":{"nodes":[{"name":"v2","target":{"__typename":"Tag","oid":"` + git("rev-parse", "v2") +
		`"}},{"name":"v1","target":{"__typename":"Commit","oid":"` + git("rev-parse", "v1") + `"}}]},"v1":{"name":"v1","prefix":"refs/tags/"}}}`
	if b, _ := json.Marshal(tags); string(b) != want {
		t.Errorf("tags:\n%s\nwant\n%s", b, want)
	}

	var commit struct {
		Repository struct {
			Object struct {
				ID, Oid, AbbreviatedOid, Message, MessageHeadline, MessageBody, URL string
				CommittedDate, AuthoredDate                                         string
				Author                                                              struct {
					Name, Email, Date string
					User              *struct{ Login string }
				}
				Committer struct{ Name string }
				Parents   struct{ Nodes []struct{ Oid string } }
				Tree      struct {
					Oid     string
					Entries []struct {
						Name, Type, Oid, Path string
						Mode                  int
					}
				}
			}
		}
	}
	gqlData(t, env, token, `{ repository(owner: "octo", name: "hello") { object(expression: "main") { ... on Commit {
		id oid abbreviatedOid message messageHeadline messageBody url committedDate authoredDate
		author { name email date user { login } } committer { name } parents(first: 5) { nodes { oid } }
		tree { oid entries { name type oid path mode } } } } } }`, nil, &commit)
	c := commit.Repository.Object
	restCommit, _, err := rest.Repositories.GetCommit(ctx, "octo", "hello", "main", nil)
	apptest.Must(t, "REST commit", err)
	if c.Oid != git("rev-parse", "main") || c.ID != restCommit.GetNodeID() || c.AbbreviatedOid != c.Oid[:7] ||
		c.Message != "Add docs\n\nThe guide and a logo." || c.MessageHeadline != "Add docs" || c.MessageBody != "The guide and a logo." ||
		c.URL != restCommit.GetHTMLURL() || c.Author.Name != git("log", "-1", "--format=%an", "main") ||
		c.Author.Email != git("log", "-1", "--format=%ae", "main") || c.Author.User != nil || c.Author.Date == "" ||
		c.Committer.Name != git("log", "-1", "--format=%cn", "main") || len(c.Parents.Nodes) != 1 ||
		c.Parents.Nodes[0].Oid != git("rev-parse", "main^") || c.Tree.Oid != git("rev-parse", "main^{tree}") {
		t.Errorf("object(expression: main): %+v", c)
	}
	var entries []string
	for _, e := range c.Tree.Entries {
		entries = append(entries, strconv.FormatInt(int64(e.Mode), 8)+" "+e.Type+" "+e.Oid+"\t"+e.Path)
	}
	if want := git("ls-tree", "main"); strings.Join(entries, "\n") != strings.ReplaceAll(want, "040000", "40000") {
		t.Errorf("tree entries:\n%s\nwant\n%s", strings.Join(entries, "\n"), want)
	}

	var objects map[string]any
	gqlData(t, env, token, `{ repository(owner: "octo", name: "hello") {
		guide: object(expression: "main:docs/guide.md") { __typename oid ... on Blob { text byteSize isBinary isTruncated } }
		logo: object(expression: "main:docs/logo.bin") { ... on Blob { text byteSize isBinary } }
		docs: object(expression: "main:docs") { ... on Tree { entries { name path } } }
		byOid: object(oid: "`+git("rev-parse", "feature")+`") { ... on Commit { messageHeadline } }
		none: object(expression: "main:nothing") { oid }
		parent: object(expression: "main~1") { oid }
		v1: object(expression: "v1") { __typename oid }
		v2: object(expression: "v2") { __typename oid }
		tree: object(expression: "`+git("rev-parse", "main^{tree}")+`") { __typename } } }`, nil, &objects)
	want = `{"repository":{"byOid":{"messageHeadline":"Add a feature"},"docs":{"entries":[{"name":"guide.md","path":"docs/guide.md"},` +
		`{"name":"logo.bin","path":"docs/logo.bin"}]},"guide":{"__typename":"Blob","byteSize":9,"isBinary":false,"isTruncated":false,` +
		`"oid":"` + git("rev-parse", "main:docs/guide.md") + `","text":"Read me.\n"},"logo":{"byteSize":3,"isBinary":true,"text":null},` +
		`"none":null,"parent":null,"tree":{"__typename":"Tree"},"v1":{"__typename":"Commit","oid":"` + git("rev-parse", "v1") + `"},` +
		`"v2":{"__typename":"Tag","oid":"` + git("rev-parse", "v2") + `"}}}`
	if b, _ := json.Marshal(objects); string(b) != want {
		t.Errorf("objects:\n%s\nwant\n%s", b, want)
	}

	restTag, _, err := rest.Git.GetTag(ctx, "octo", "hello", git("rev-parse", "v2"))
	apptest.Must(t, "REST tag", err)
	var tag map[string]any
	gqlData(t, env, token, `{ repository(owner: "octo", name: "hello") { ref(qualifiedName: "refs/tags/v2") { target { ... on Tag {
		id oid abbreviatedOid name message tagger { name email date } target { __typename oid } repository { nameWithOwner } } } } } }`, nil, &tag)
	want = `{"repository":{"ref":{"target":{"abbreviatedOid":"` + restTag.GetSHA()[:7] + `","id":"` + restTag.GetNodeID() + `","message":"Version 2\n",` +
		`"name":"v2","oid":"` + restTag.GetSHA() + `","repository":{"nameWithOwner":"octo/hello"},"tagger":{"date":"` +
		restTag.GetTagger().GetDate().UTC().Format("2006-01-02T15:04:05Z") + `","email":"` + git("tag", "-l", "--format=%(taggeremail:trim)", "v2") +
		`","name":"` + git("tag", "-l", "--format=%(taggername)", "v2") + `"},"target":{"__typename":"Commit","oid":"` + git("rev-parse", "v2^{commit}") + `"}}}}}`
	if b, _ := json.Marshal(tag); string(b) != want {
		t.Errorf("tag v2:\n%s\nwant\n%s", b, want)
	}

	var nodes map[string]any
	gqlData(t, env, token, `query($ids: [ID!]!) { nodes(ids: $ids) { __typename ... on Commit { oid } ... on Ref { name } ... on Tag { name } } }`,
		map[string]any{"ids": []string{restCommit.GetNodeID(), restRef.GetNodeID(), restTag.GetNodeID()}}, &nodes)
	want = `{"nodes":[{"__typename":"Commit","oid":"` + c.Oid + `"},{"__typename":"Ref","name":"main"},{"__typename":"Tag","name":"v2"}]}`
	if b, _ := json.Marshal(nodes); string(b) != want {
		t.Errorf("nodes: %s, want %s", b, want)
	}
	secret := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	apptest.Git(t, dir, "push", "-q", env.GitURL("octo", "secret", "octo", token), "main")
	bob := env.Token(env.User("bob"), "repo")
	secretCommit := gitjson.CommitNodeID(secret.ID, c.Oid)
	for id, want := range map[string]string{restCommit.GetNodeID(): "", secretCommit: "NOT_FOUND"} {
		r := post(t, env, bob, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": id})
		if len(r.Errors) == 0 && want != "" || len(r.Errors) > 0 && r.Errors[0].Type != want {
			t.Errorf("another user's node(id: %s): %+v, want %q", id, r, want)
		}
	}
	// A fine-grained token reads a private repository's git data with
	// Contents read only, as REST's git database routes.
	metadataOnly := env.FineGrainedToken(octo, octo, apptest.AllRepos, "issues:read")
	r := post(t, env, metadataOnly, `query($id: ID!) { repository(owner: "octo", name: "secret") {
		refs(refPrefix: "refs/heads/", first: 1) { totalCount } object(expression: "main") { oid } ref(qualifiedName: "main") { name } }
		node(id: $id) { id } }`, map[string]any{"id": secretCommit})
	if len(r.Errors) != 4 || r.Errors[0].Type != "FORBIDDEN" || string(r.Data["repository"]) != `{"refs":null,"object":null,"ref":null}` {
		t.Errorf("without Contents read: %+v %s", r, r.Data["repository"])
	}
	contents := env.FineGrainedToken(octo, octo, apptest.AllRepos, "contents:read")
	if r := post(t, env, contents, `query($id: ID!) { node(id: $id) { id } }`, map[string]any{"id": secretCommit}); len(r.Errors) != 0 {
		t.Errorf("with Contents read: %+v", r)
	}
}

// TestAssignableUsers: assignableUsers and mentionableUsers list whom
// GET /repos/{owner}/{repo}/assignees lists (the owner and a
// collaborator with push access), filtered by query.
func TestAssignableUsers(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	ctx := apptest.Ctx()
	inv, _, err := env.Client(token).Repositories.AddCollaborator(ctx, "octo", "hello", "bob", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite a collaborator", err)
	_, err = env.Client(env.Token(bob, "repo")).Users.AcceptInvitation(ctx, inv.GetID())
	apptest.Must(t, "accept the invitation", err)
	assignees, _, err := env.Client(token).Issues.ListAssignees(ctx, "octo", "hello", nil)
	apptest.Must(t, "REST assignees", err)
	var want []string
	for _, a := range assignees {
		want = append(want, a.GetLogin())
	}
	if !slices.Equal(want, []string{"bob", "octo"}) {
		t.Fatalf("REST assignees: %v, want bob and octo", want)
	}
	var out struct {
		Repository struct {
			AssignableUsers, MentionableUsers struct {
				TotalCount int
				Nodes      []struct{ Login string }
			}
			Filtered struct{ Nodes []struct{ Login string } }
		}
	}
	gqlData(t, env, token, `{ repository(owner: "octo", name: "hello") {
		assignableUsers(first: 100) { totalCount nodes { login } }
		mentionableUsers(first: 100) { totalCount nodes { login } }
		filtered: assignableUsers(first: 10, query: "OC") { nodes { login } } } }`, nil, &out)
	logins := func(nodes []struct{ Login string }) []string {
		var out []string
		for _, n := range nodes {
			out = append(out, n.Login)
		}
		return out
	}
	r := out.Repository
	if got := logins(r.AssignableUsers.Nodes); !slices.Equal(got, want) || r.AssignableUsers.TotalCount != len(want) {
		t.Errorf("assignableUsers: %v, want %v", got, want)
	}
	if got := logins(r.MentionableUsers.Nodes); !slices.Equal(got, want) {
		t.Errorf("mentionableUsers: %v, want %v", got, want)
	}
	if got := logins(r.Filtered.Nodes); !slices.Equal(got, []string{"octo"}) {
		t.Errorf("assignableUsers(query: OC): %v", got)
	}
}
