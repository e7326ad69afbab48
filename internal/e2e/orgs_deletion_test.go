package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// TestDeleteOrganization: an owner deletes an organization: 202 at once,
// its hook gets the organization event deleted, then in the background
// its repositories (git data included, a locked one too) and the
// organization go, its members lose it, and the feeds' table keeps its
// events; the audit log has org.delete until the organization goes with
// its log.
func TestDeleteOrganization(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}),
		func(c *app.Config) { c.OrgDeletion.PollInterval = 50 * time.Millisecond })
	ctx := apptest.Ctx()
	octo := env.User("octo")
	hubot := env.User("hubot")
	acme := env.Org("acme", octo, hubot)
	rockets := env.Repo(acme, "rockets")
	env.Repo(acme, "anvils", apptest.RepoOpts{Private: true})
	_, err := env.Q().ExecContext(ctx, `UPDATE repositories SET migration_locked = TRUE WHERE id = $1`, rockets.ID)
	apptest.Must(t, "lock", err)
	owner := env.Client(env.Token(octo, "admin:org", "admin:org_hook", "repo"))
	// The receiver holds its answer to the deleted event, and with it the
	// deletion, until the test has read the audit log.
	arrived, release := make(chan string, 1), make(chan struct{})
	hold := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-GitHub-Event") != "organization" {
			return
		}
		var p struct {
			Action string
			Sender struct{ Login string }
		}
		_ = json.NewDecoder(r.Body).Decode(&p)
		select {
		case arrived <- p.Action + " by " + p.Sender.Login:
		default:
		}
		select {
		case <-release:
		case <-r.Context().Done():
		}
	}))
	t.Cleanup(hold.Close)
	var releaseOnce sync.Once
	releaseHold := func() { releaseOnce.Do(func() { close(release) }) }
	t.Cleanup(releaseHold) // before hold.Close
	_, _, err = owner.Organizations.CreateHook(ctx, "acme", &github.Hook{Name: github.Ptr("web"), Events: []string{"organization"},
		Config: &github.HookConfig{URL: github.Ptr(hold.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)

	if resp, _ := env.Client(env.Token(hubot, "admin:org")).Organizations.Delete(ctx, "acme"); apptest.ResponseStatus(resp) != http.StatusForbidden {
		t.Fatalf("a member deletes the organization: %d, want 403", apptest.ResponseStatus(resp))
	}
	resp, err := owner.Organizations.Delete(ctx, "acme")
	if apptest.ResponseStatus(resp) != http.StatusAccepted {
		t.Fatalf("delete: %d %v, want 202", apptest.ResponseStatus(resp), err)
	}
	select {
	case got := <-arrived:
		if got != "deleted by octo" {
			t.Fatalf("organization event %q, want deleted by octo", got)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("no organization event 30 s after the deletion")
	}
	entries, _, err := env.Client(env.Token(octo, "read:audit_log")).Organizations.GetAuditLog(ctx, "acme",
		&github.GetAuditLogOptions{Phrase: github.Ptr("action:org.delete")})
	apptest.Must(t, "audit log of the organization being deleted", err)
	if len(entries) != 1 || entries[0].GetActor() != "octo" {
		t.Fatalf("org.delete entries: %+v", entries)
	}
	releaseHold()
	testwait.Until(t, "the organization's deletion", func() bool {
		_, resp, _ := owner.Organizations.Get(ctx, "acme")
		return apptest.ResponseStatus(resp) == http.StatusNotFound
	})
	if _, err := os.Stat(env.App.Repos.GitDir(rockets.ID)); !os.IsNotExist(err) {
		t.Fatalf("git data of a deleted organization's repository: %v", err)
	}
	// The audit log goes with the organization's row (ON DELETE CASCADE).
	var repositories, events, audit int
	apptest.Must(t, "count", env.Q().QueryRowContext(ctx, `SELECT (SELECT count(*) FROM repositories),
		(SELECT count(*) FROM events WHERE org_id = $1), (SELECT count(*) FROM audit_log WHERE org_id = $1)`, acme.ID).Scan(&repositories, &events, &audit))
	if repositories != 0 || events == 0 || audit != 0 {
		t.Fatalf("%d repositories left, %d events kept, %d audit entries left; want none, some, none", repositories, events, audit)
	}
	orgs, _, err := env.Client(env.Token(hubot, "read:org")).Organizations.List(ctx, "", nil)
	apptest.Must(t, "member's organizations", err)
	if len(orgs) != 0 {
		t.Fatalf("member still lists %d organizations", len(orgs))
	}
}
