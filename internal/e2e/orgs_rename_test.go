package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestRenameOrganization: a site administrator renames an organization
// (PATCH /admin/organizations/{org}, 202 with the platform's message): the
// organization answers under its new login, its hook gets organization
// renamed with changes.login.from, its audit log has org.rename, and
// requests naming the old login in a repository path redirect until an
// account takes the old login. Owners who are not site administrators get
// a 403, so do tokens without admin:org; a taken or invalid login is a 422.
func TestRenameOrganization(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	octo := env.User("octo")
	env.User("hubot")
	acme := env.Org("acme", octo)
	env.Repo(acme, "rockets", apptest.RepoOpts{Private: true})
	owner := env.Client(env.Token(octo, "admin:org", "admin:org_hook", "repo", "read:audit_log"))
	admin := env.Client(env.Token(root, "admin:org"))
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Organizations.CreateHook(ctx, "acme", &github.Hook{Name: github.Ptr("web"), Events: []string{"organization"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "org hook", err)

	for _, c := range []struct {
		name   string
		client *github.Client
		login  string
		want   int
	}{
		{"an owner who is no site administrator", owner, "acme-corp", http.StatusForbidden},
		{"a site administrator's token without admin:org", env.Client(env.Token(root, "repo")), "acme-corp", http.StatusForbidden},
		{"a taken login", admin, "HUBOT", http.StatusUnprocessableEntity},
		{"an invalid login", admin, "-acme", http.StatusUnprocessableEntity},
	} {
		if _, resp, _ := c.client.Admin.RenameOrgByName(ctx, "acme", c.login); apptest.ResponseStatus(resp) != c.want {
			t.Fatalf("%s: %d, want %d", c.name, apptest.ResponseStatus(resp), c.want)
		}
	}

	// go-github reads a 202 as an *AcceptedError holding the body.
	_, resp, err := admin.Admin.RenameOrgByName(ctx, "acme", "acme-corp")
	accepted, ok := err.(*github.AcceptedError)
	if !ok {
		t.Fatalf("rename: %v, want go-github's AcceptedError of a 202", err)
	}
	var res github.RenameOrgResponse
	apptest.Must(t, "rename response", json.Unmarshal(accepted.Raw, &res))
	if resp.StatusCode != http.StatusAccepted || res.GetMessage() != "Job queued to rename organization. It may take a few minutes to complete." ||
		!strings.HasSuffix(res.GetURL(), "/orgs/acme-corp") {
		t.Fatalf("rename: %d %+v", resp.StatusCode, res)
	}
	org, _, err := owner.Organizations.Get(ctx, "acme-corp")
	apptest.Must(t, "renamed organization", err)
	if org.GetID() != acme.ID || org.GetLogin() != "acme-corp" {
		t.Fatalf("renamed organization: %+v", org)
	}

	rc.WaitFor(t, apptest.EventAction, "organization renamed")
	var body map[string]any
	for _, d := range rc.Deliveries() {
		if d.Event == "organization" {
			apptest.Must(t, "organization event", json.Unmarshal(d.Body, &body))
			break
		}
	}
	from, _ := body["changes"].(map[string]any)["login"].(map[string]any)["from"].(string)
	if body["action"] != "renamed" || from != "acme" || body["organization"].(map[string]any)["login"] != "acme-corp" ||
		body["sender"].(map[string]any)["login"] != "root" {
		t.Fatalf("renamed event: %v", body)
	}

	entries, _, err := owner.Organizations.GetAuditLog(ctx, "acme-corp", &github.GetAuditLogOptions{Phrase: github.Ptr("action:org.rename")})
	apptest.Must(t, "audit log", err)
	if len(entries) != 1 || entries[0].GetActor() != "root" {
		t.Fatalf("org.rename entries: %+v", entries)
	}

	// The old login redirects (go-github follows), reads and writes.
	repo, _, err := owner.Repositories.Get(ctx, "acme", "rockets")
	apptest.Must(t, "old repository URL", err)
	if repo.GetFullName() != "acme-corp/rockets" {
		t.Fatalf("old repository URL leads to %q", repo.GetFullName())
	}
	if _, resp, _ := env.Client("").Repositories.Get(ctx, "acme", "rockets"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("anonymous old URL of a private repository: %d, want 404", apptest.ResponseStatus(resp))
	}
	// Until an account takes the old login.
	env.User("acme")
	if _, resp, _ := owner.Repositories.Get(ctx, "acme", "rockets"); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("old URL once the login is taken: %d, want 404", apptest.ResponseStatus(resp))
	}
}
