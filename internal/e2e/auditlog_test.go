package e2e_test

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
)

// actions returns the entries' actions in order.
func actions(list []*github.AuditEntry) []string {
	var out []string
	for _, e := range list {
		out = append(out, e.GetAction())
	}
	return out
}

func TestAuditLogRecordsAdministrativeChanges(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := context.Background()
	boss, dev := env.User("boss"), env.User("dev")
	acme := env.Org("acme", boss, dev)
	bossToken := env.Token(boss, "admin:org", "admin:org_hook", "repo", "delete_repo", "read:audit_log")
	gh := env.Client(bossToken)

	apptest.Step(t, "the owner makes administrative changes", func(t *testing.T) {
		_, _, err := gh.Repositories.Create(ctx, "acme", &github.Repository{Name: new("app")})
		apptest.Must(t, "create repo", err)
		_, _, err = gh.Repositories.Edit(ctx, "acme", "app", &github.Repository{Name: new("app2")})
		apptest.Must(t, "rename", err)
		_, _, err = gh.Repositories.Edit(ctx, "acme", "app2", &github.Repository{Private: new(true)})
		apptest.Must(t, "make private", err)
		hook, _, err := gh.Organizations.CreateHook(ctx, "acme", &github.Hook{Config: &github.HookConfig{URL: new("https://example.com/h")}})
		apptest.Must(t, "create hook", err)
		_, _, err = gh.Organizations.EditHook(ctx, "acme", hook.GetID(), &github.Hook{Events: []string{"push", "repository"}})
		apptest.Must(t, "edit hook", err)
		_, err = gh.Organizations.DeleteHook(ctx, "acme", hook.GetID())
		apptest.Must(t, "delete hook", err)
		_, _, err = gh.Organizations.CreateRepositoryRuleset(ctx, "acme", github.RepositoryRuleset{
			Name: "r", Target: new(github.RulesetTargetPush), Enforcement: github.RulesetEnforcementActive,
			Conditions: &github.RepositoryRulesetConditions{RepositoryName: &github.RepositoryRulesetRepositoryNamesConditionParameters{
				Include: []string{"~ALL"}, Exclude: []string{}}}})
		apptest.Must(t, "create ruleset", err)
		_, _, err = gh.Organizations.Edit(ctx, "acme", &github.Organization{DefaultRepoPermission: new("write")})
		apptest.Must(t, "edit org", err)
		_, err = gh.Organizations.RemoveMember(ctx, "acme", "dev")
		apptest.Must(t, "remove member", err)
		_, err = gh.Repositories.Delete(ctx, "acme", "app2")
		apptest.Must(t, "delete repo", err)
	})

	// The actions of the changes, newest first.
	want := []string{"repo.destroy", "org.remove_member", "org.update_default_repository_permission",
		"repository_ruleset.create", "hook.destroy", "hook.config_changed", "hook.create", "repo.access",
		"repo.rename", "repo.create"}
	apptest.Step(t, "the log has every change, newest first, with its actor and token", func(t *testing.T) {
		all, _, err := gh.Organizations.GetAuditLog(ctx, "acme", nil)
		apptest.Must(t, "audit log", err)
		if got := actions(all); !slices.Equal(got, want) {
			t.Fatalf("actions\n got %v\nwant %v", got, want)
		}
		for _, e := range all {
			if e.GetActor() != "boss" || e.GetOrg() != "acme" || e.GetDocumentID() == "" || e.Timestamp == nil ||
				time.Since(e.Timestamp.Time) > time.Hour || e.CreatedAt == nil {
				t.Errorf("entry %+v", e)
			}
		}
		// Each entry names the token the change was made with.
		sum := sha256.Sum256([]byte(bossToken))
		for _, e := range all {
			if e.GetTokenID() == 0 || e.GetHashedToken() != base64.StdEncoding.EncodeToString(sum[:]) ||
				!strings.Contains(e.GetTokenScopes(), "admin:org") ||
				e.AdditionalFields["programmatic_access_type"] != "Personal access token (classic)" {
				t.Errorf("%s: token fields %v %q %q %v", e.GetAction(), e.GetTokenID(), e.GetHashedToken(), e.GetTokenScopes(),
					e.AdditionalFields["programmatic_access_type"])
			}
		}
		if e := all[1]; e.GetUser() != "dev" {
			t.Errorf("remove member entry %+v", e)
		}
		if e := all[0]; e.AdditionalFields["repo"] != "acme/app2" {
			t.Errorf("repo.destroy entry %+v", e.AdditionalFields)
		}
	})

	apptest.Step(t, "the qualifiers filter the log", func(t *testing.T) {
		today := time.Now().UTC().Format(time.DateOnly)
		for phrase, want := range map[string][]string{
			"action:repo":                        {"repo.destroy", "repo.access", "repo.rename", "repo.create"},
			"action:hook.create":                 {"hook.create"},
			"actor:dev":                          nil,
			"actor:boss action:repo.access":      {"repo.access"},
			"repo:acme/app2 action:repo.rename":  {"repo.rename"},
			"created:>=" + today + " action:org": {"org.remove_member", "org.update_default_repository_permission"},
			"created:<2000-01-01":                nil,
		} {
			got, _, err := gh.Organizations.GetAuditLog(ctx, "acme", &github.GetAuditLogOptions{Phrase: new(phrase)})
			apptest.Must(t, phrase, err)
			if !slices.Equal(actions(got), want) {
				t.Errorf("%s: %v, want %v", phrase, actions(got), want)
			}
		}
		if got, _, _ := gh.Organizations.GetAuditLog(ctx, "acme", &github.GetAuditLogOptions{Include: new("git")}); len(got) != 0 {
			t.Errorf("git entries: %v", actions(got))
		}
		if resp, _ := env.Do("GET", "/orgs/acme/audit-log?phrase=colour:blue", env.Token(boss, "read:audit_log"), nil); resp.StatusCode != 422 {
			t.Errorf("unknown qualifier: %d", resp.StatusCode)
		}
	})

	apptest.Step(t, "ascending pages follow the cursors both ways", func(t *testing.T) {
		// Three at a time.
		opts := &github.GetAuditLogOptions{Order: new("asc"), ListCursorOptions: github.ListCursorOptions{PerPage: 3}}
		var pages [][]*github.AuditEntry
		for {
			page, resp, err := gh.Organizations.GetAuditLog(ctx, "acme", opts)
			apptest.Must(t, "page", err)
			pages = append(pages, page)
			if resp.After == "" {
				break
			}
			opts.After = resp.After
		}
		var walked []string
		for _, p := range pages {
			walked = append(walked, actions(p)...)
		}
		reversed := slices.Clone(want)
		slices.Reverse(reversed)
		if len(pages) != 4 || !slices.Equal(walked, reversed) {
			t.Fatalf("ascending pages %d: %v", len(pages), walked)
		}
		// A cursor is not a document id.
		_, resp, err := gh.Organizations.GetAuditLog(ctx, "acme", &github.GetAuditLogOptions{Order: new("asc"),
			ListCursorOptions: github.ListCursorOptions{PerPage: 3, After: pages[0][0].GetDocumentID()}})
		if err == nil || resp.StatusCode != 422 {
			t.Errorf("a document id is no cursor: %v", err)
		}
		second := &github.GetAuditLogOptions{Order: new("asc"), ListCursorOptions: github.ListCursorOptions{PerPage: 3}}
		_, resp, err = gh.Organizations.GetAuditLog(ctx, "acme", second)
		apptest.Must(t, "first page", err)
		second.After = resp.After
		_, resp, err = gh.Organizations.GetAuditLog(ctx, "acme", second)
		apptest.Must(t, "second page", err)
		if resp.Before == "" || !strings.Contains(resp.Header.Get("Link"), `rel="prev"`) {
			t.Fatalf("second page links: %s", resp.Header.Get("Link"))
		}
		back, _, err := gh.Organizations.GetAuditLog(ctx, "acme", &github.GetAuditLogOptions{Order: new("asc"),
			ListCursorOptions: github.ListCursorOptions{PerPage: 3, Before: resp.Before}})
		apptest.Must(t, "back", err)
		if !slices.Equal(actions(back), actions(pages[0])) {
			t.Errorf("back to the first page: %v, want %v", actions(back), actions(pages[0]))
		}
	})

	apptest.Step(t, "only owners read the log, with read:audit_log", func(t *testing.T) {
		if _, resp, err := env.Client(env.Token(boss, "admin:org")).Organizations.GetAuditLog(ctx, "acme", nil); err == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("token without read:audit_log: %v", err)
		}
		erin := env.User("erin")
		apptest.Must(t, "erin joins", accounts.SetMember(ctx, env.Q(), acme.ID, erin.ID, accounts.RoleMember))
		if _, resp, err := env.Client(env.Token(erin, "read:audit_log")).Organizations.GetAuditLog(ctx, "acme", nil); err == nil || resp.StatusCode != http.StatusForbidden {
			t.Errorf("a member who is not an owner: %v", err)
		}
		carol := env.User("carol")
		env.Org("other", carol)
		if _, resp, err := env.Client(env.Token(carol, "read:audit_log")).Organizations.GetAuditLog(ctx, "acme", nil); err == nil || resp.StatusCode == http.StatusOK {
			t.Errorf("a stranger read the audit log: %v", err)
		}
	})
}

func TestAuditLogRolesAndTransfers(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := context.Background()
	boss, dev := env.User("boss"), env.User("dev")
	acme := env.Org("acme", boss, dev)
	env.Org("beta", boss)
	gh := env.Client(env.Token(boss, "admin:org", "repo", "read:audit_log"))

	_, _, err := gh.Organizations.EditOrgMembership(ctx, "dev", "acme", &github.Membership{Role: new("admin")})
	apptest.Must(t, "make dev an owner", err)
	env.Repo(acme, "app")
	_, _, err = gh.Repositories.Transfer(ctx, "acme", "app", github.TransferRequest{NewOwner: "beta"})
	if _, ok := err.(*github.AcceptedError); err != nil && !ok {
		t.Fatalf("transfer: %v", err)
	}

	log, _, err := gh.Organizations.GetAuditLog(ctx, "acme", nil)
	apptest.Must(t, "acme log", err)
	if got := actions(log); !slices.Equal(got, []string{"repo.transfer", "repo.create", "org.update_member"}) {
		t.Fatalf("acme actions %v", got)
	}
	if e := log[2]; e.GetUser() != "dev" || e.AdditionalFields["permission"] != "admin" || e.AdditionalFields["old_permission"] != "member" {
		t.Errorf("role change %+v %v", e, e.AdditionalFields)
	}
	beta, _, err := gh.Organizations.GetAuditLog(ctx, "beta", nil)
	apptest.Must(t, "beta log", err)
	if got := actions(beta); !slices.Equal(got, []string{"repo.transfer"}) || beta[0].AdditionalFields["repo"] != "beta/app" {
		t.Errorf("beta entries %v", got)
	}
}
