package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/depreview/advisory"
	"forgeapi/internal/depreview/advisorydb"
	"forgeapi/internal/repos"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// advisories are two npm advisories: alpha before 2.0.0 (high, a CVE),
// bravo from 1.0.0 up to 1.2.0 (moderate).
var advisories = []string{
	`{"id": "GHSA-aaaa-bbbb-cccc", "modified": "2024-03-01T00:00:00Z", "published": "2024-02-01T00:00:00Z",
	  "aliases": ["CVE-2024-0001"], "summary": "Prototype pollution in alpha", "details": "alpha before 2.0.0 merges untrusted keys.",
	  "references": [{"type": "WEB", "url": "https://example.com/alpha"}],
	  "affected": [{"package": {"ecosystem": "npm", "name": "alpha"},
	    "ranges": [{"type": "ECOSYSTEM", "events": [{"introduced": "0"}, {"fixed": "2.0.0"}]}]}],
	  "database_specific": {"severity": "HIGH", "cwe_ids": ["CWE-1321"]}}`,
	`{"id": "GHSA-dddd-eeee-ffff", "modified": "2024-04-01T00:00:00Z", "published": "2024-04-01T00:00:00Z",
	  "summary": "ReDoS in bravo", "details": "bravo 1.0.0 to 1.2.0.",
	  "affected": [{"package": {"ecosystem": "npm", "name": "bravo"},
	    "ranges": [{"type": "SEMVER", "events": [{"introduced": "1.0.0"}, {"last_affected": "1.2.0"}]}]}],
	  "database_specific": {"severity": "MODERATE"}}`,
}

func importAdvisories(t *testing.T, env *apptest.Env) {
	t.Helper()
	var records []advisory.Record
	for i, doc := range advisories {
		rec, err := advisory.ParseRecord(fmt.Sprintf("a%d.json", i), []byte(doc))
		apptest.Must(t, "parse advisory", err)
		records = append(records, rec)
	}
	_, err := advisorydb.Import(context.Background(), env.App.DB, records)
	apptest.Must(t, "import advisories", err)
}

// lock is a package-lock.json of the packages (name@version, dev when
// the name ends in "!").
func lock(pkgs ...string) string {
	entries := []string{`"": {"name": "app", "version": "1.0.0"}`}
	for _, p := range pkgs {
		dev := strings.HasSuffix(p, "!")
		name, version, _ := strings.Cut(strings.TrimSuffix(p, "!"), "@")
		entries = append(entries, fmt.Sprintf(`"node_modules/%s": {"version": %q, "dev": %t}`, name, version, dev))
	}
	return fmt.Sprintf(`{"name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": true, "packages": {%s}}`,
		strings.Join(entries, ", "))
}

// waitChecked waits until the repository's alerts follow its last push.
func waitChecked(t *testing.T, env *apptest.Env, repo *repos.Repository) {
	t.Helper()
	testwait.For(t, "the dependabot check of "+repo.Name, func() error {
		var due bool
		if err := env.App.DB.QueryRowContext(context.Background(), `SELECT requested > checked FROM dependabot_repositories
			WHERE repository_id = $1`, repo.ID).Scan(&due); err != nil {
			return err
		}
		if due {
			return fmt.Errorf("due")
		}
		return nil
	})
}

// TestDependabotAlerts follows a repository's vulnerable dependencies:
// alerts off (403) until enabled, alerts from the default branch's lock
// file after enabling, fixed when an upgrade and a removal take the
// vulnerable versions away, reintroduced when one comes back, dismissed
// and reopened with their validation, the filters, and the webhooks.
func TestDependabotAlerts(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	importAdvisories(t, env)
	octo := env.User("octo")
	repo := env.Repo(octo, "app")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "app", &github.Hook{Name: github.Ptr("web"), Events: []string{"dependabot_alert"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "create hook", err)

	work := apptest.WorkTree(t, nil)
	remote := env.GitURL("octo", "app", "octo", token)
	apptest.Commit(t, work, "deps", map[string]string{"web/package-lock.json": lock("alpha@1.0.0", "bravo@1.1.0!", "charlie@1.0.0")})
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")

	apptest.Step(t, "off until enabled", func(t *testing.T) {
		on, _, err := c.Repositories.GetVulnerabilityAlerts(ctx, "octo", "app")
		apptest.Must(t, "check", err)
		if on {
			t.Fatal("vulnerability alerts on before enabling")
		}
		resp, b := env.Get("/repos/octo/app/dependabot/alerts", "token "+token)
		apptest.WantStatus(t, "disabled", resp, b, http.StatusForbidden)
		_, err = c.Repositories.EnableVulnerabilityAlerts(ctx, "octo", "app")
		apptest.Must(t, "enable", err)
		if on, _, err = c.Repositories.GetVulnerabilityAlerts(ctx, "octo", "app"); err != nil || !on {
			t.Fatalf("after enabling: %v %v", on, err)
		}
	})
	waitChecked(t, env, repo)

	apptest.Step(t, "the lock file's vulnerable packages are alerts", func(t *testing.T) {
		alerts, _, err := c.Dependabot.ListRepoAlerts(ctx, "octo", "app", &github.ListAlertsOptions{Sort: github.Ptr("created"), Direction: github.Ptr("asc")})
		apptest.Must(t, "list", err)
		if len(alerts) != 2 {
			t.Fatalf("alerts: %d", len(alerts))
		}
		alpha, bravo := alerts[0], alerts[1]
		if alpha.GetDependency().GetPackage().GetName() != "alpha" {
			alpha, bravo = bravo, alpha
		}
		adv, vuln := alpha.GetSecurityAdvisory(), alpha.GetSecurityVulnerability()
		if alpha.GetState() != "open" || alpha.GetDependency().GetManifestPath() != "web/package-lock.json" ||
			alpha.GetDependency().GetScope() != "runtime" || adv.GetGHSAID() != "GHSA-aaaa-bbbb-cccc" || adv.GetCVEID() != "CVE-2024-0001" ||
			adv.GetSeverity() != "high" || vuln.GetVulnerableVersionRange() != "< 2.0.0" || vuln.GetFirstPatchedVersion().GetIdentifier() != "2.0.0" {
			t.Fatalf("alpha: %+v", alpha)
		}
		if bravo.GetDependency().GetScope() != "development" || bravo.GetSecurityAdvisory().GetSeverity() != "medium" ||
			bravo.GetSecurityVulnerability().GetVulnerableVersionRange() != ">= 1.0.0, <= 1.2.0" || bravo.GetSecurityVulnerability().FirstPatchedVersion != nil {
			t.Fatalf("bravo: %+v", bravo)
		}
		high, _, err := c.Dependabot.ListRepoAlerts(ctx, "octo", "app", &github.ListAlertsOptions{Severity: github.Ptr("high,critical")})
		apptest.Must(t, "by severity", err)
		dev, _, err := c.Dependabot.ListRepoAlerts(ctx, "octo", "app", &github.ListAlertsOptions{Scope: github.Ptr("development")})
		apptest.Must(t, "by scope", err)
		byPkg, _, err := c.Dependabot.ListRepoAlerts(ctx, "octo", "app", &github.ListAlertsOptions{Ecosystem: github.Ptr("npm"), Package: github.Ptr("bravo")})
		apptest.Must(t, "by package", err)
		if len(high) != 1 || len(dev) != 1 || len(byPkg) != 1 || byPkg[0].GetNumber() != bravo.GetNumber() {
			t.Fatalf("filters: %d %d %d", len(high), len(dev), len(byPkg))
		}
		rc.WaitFor(t, describeAlert("dependabot_alert"), "created #1", "created #2")
	})

	apptest.Step(t, "an upgrade and a removal fix them, a downgrade reintroduces one", func(t *testing.T) {
		apptest.Commit(t, work, "upgrade", map[string]string{"web/package-lock.json": lock("alpha@2.1.0", "charlie@1.0.0")})
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
		waitChecked(t, env, repo)
		fixed, _, err := c.Dependabot.ListRepoAlerts(ctx, "octo", "app", &github.ListAlertsOptions{State: github.Ptr("fixed")})
		apptest.Must(t, "fixed", err)
		if len(fixed) != 2 || fixed[0].FixedAt == nil {
			t.Fatalf("fixed: %d", len(fixed))
		}
		apptest.Commit(t, work, "downgrade", map[string]string{"web/package-lock.json": lock("alpha@1.9.0", "charlie@1.0.0")})
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
		waitChecked(t, env, repo)
		open, _, err := c.Dependabot.ListRepoAlerts(ctx, "octo", "app", &github.ListAlertsOptions{State: github.Ptr("open")})
		apptest.Must(t, "open", err)
		if len(open) != 1 || open[0].GetDependency().GetPackage().GetName() != "alpha" || open[0].FixedAt != nil {
			t.Fatalf("open: %d", len(open))
		}
		rc.WaitFor(t, describeAlert("dependabot_alert"), "fixed #1", "fixed #2", "reintroduced #1")
	})

	apptest.Step(t, "dismissing and reopening", func(t *testing.T) {
		for _, body := range []string{`{"state":"dismissed"}`, `{"state":"dismissed","dismissed_reason":"bored"}`, `{"state":"closed"}`, `{}`,
			`{"state":"dismissed","dismissed_reason":"inaccurate","dismissed_comment":"` + strings.Repeat("x", 281) + `"}`} {
			resp, b := env.DoJSON("PATCH", "/repos/octo/app/dependabot/alerts/1", token, body)
			apptest.WantStatus(t, body, resp, b, http.StatusUnprocessableEntity)
		}
		resp, b := env.DoJSON("PATCH", "/repos/octo/app/dependabot/alerts/2", token, `{"state":"dismissed","dismissed_reason":"inaccurate"}`)
		apptest.WantStatus(t, "a fixed alert", resp, b, http.StatusBadRequest)
		a, _, err := c.Dependabot.UpdateAlert(ctx, "octo", "app", 1, &github.DependabotAlertState{State: "dismissed",
			DismissedReason: github.Ptr("tolerable_risk"), DismissedComment: github.Ptr("internal only")})
		apptest.Must(t, "dismiss", err)
		if a.GetState() != "dismissed" || a.GetDismissedBy().GetLogin() != "octo" || a.GetDismissedReason() != "tolerable_risk" {
			t.Fatalf("dismissed: %+v", a)
		}
		a, _, err = c.Dependabot.UpdateAlert(ctx, "octo", "app", 1, &github.DependabotAlertState{State: "open"})
		apptest.Must(t, "reopen", err)
		if a.GetState() != "open" || a.DismissedBy != nil {
			t.Fatalf("reopened: %+v", a)
		}
		rc.WaitFor(t, describeAlert("dependabot_alert"), "dismissed #1", "reopened #1")
		resp, b = env.Get("/repos/octo/app/dependabot/alerts?state=bad", "token "+token)
		apptest.WantStatus(t, "bad state", resp, b, http.StatusUnprocessableEntity)
		resp, b = env.Get("/repos/octo/app/dependabot/alerts/99", "token "+token)
		apptest.WantStatus(t, "no alert", resp, b, http.StatusNotFound)
	})

	apptest.Step(t, "turned off", func(t *testing.T) {
		_, err := c.Repositories.DisableVulnerabilityAlerts(ctx, "octo", "app")
		apptest.Must(t, "disable", err)
		resp, b := env.Get("/repos/octo/app/dependabot/alerts", "token "+token)
		apptest.WantStatus(t, "disabled", resp, b, http.StatusForbidden)
	})
}

// TestDependabotOrgAndEnterprise lists an organization's and an
// enterprise's alerts with their repositories.
func TestDependabotOrgAndEnterprise(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	importAdvisories(t, env)
	boss := env.User("boss")
	org := env.Org("acme", boss)
	env.Enterprise("bigco", boss, org)
	repo := env.Repo(org, "rockets")
	token := env.Token(boss, "repo", "admin:enterprise")
	c := env.Client(token)
	_, err := c.Repositories.EnableVulnerabilityAlerts(ctx, "acme", "rockets")
	apptest.Must(t, "enable", err)
	work := apptest.WorkTree(t, nil)
	apptest.Commit(t, work, "deps", map[string]string{"package-lock.json": lock("alpha@1.0.0")})
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "rockets", "boss", token), "HEAD:refs/heads/main")
	waitChecked(t, env, repo)
	alerts, _, err := c.Dependabot.ListOrgAlerts(ctx, "acme", nil)
	apptest.Must(t, "org alerts", err)
	if len(alerts) != 1 || alerts[0].GetRepository().GetFullName() != "acme/rockets" {
		t.Fatalf("org alerts: %+v", alerts)
	}
	resp, b := env.Get("/enterprises/bigco/dependabot/alerts", "token "+token)
	apptest.WantStatus(t, "enterprise", resp, b, http.StatusOK)
	var ent []map[string]any
	apptest.Must(t, "decode", json.Unmarshal(b, &ent))
	if len(ent) != 1 {
		t.Fatalf("enterprise alerts: %s", b)
	}
}

// TestDependabotNewAdvisories raises alerts for an import of the
// advisory database without a push: the checker's next pass checks the
// repositories checked against an older version.
func TestDependabotNewAdvisories(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "app")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	work := apptest.WorkTree(t, nil)
	apptest.Commit(t, work, "deps", map[string]string{"package-lock.json": lock("alpha@1.0.0")})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "app", "octo", token), "HEAD:refs/heads/main")
	_, err := c.Repositories.EnableVulnerabilityAlerts(ctx, "octo", "app")
	apptest.Must(t, "enable", err)
	waitChecked(t, env, repo)
	alerts, _, err := c.Dependabot.ListRepoAlerts(ctx, "octo", "app", nil)
	apptest.Must(t, "list", err)
	if len(alerts) != 0 {
		t.Fatalf("alerts before any advisory: %d", len(alerts))
	}
	importAdvisories(t, env)
	env.App.DependabotChecker.RunOnce(ctx)
	waitChecked(t, env, repo)
	alerts, _, err = c.Dependabot.ListRepoAlerts(ctx, "octo", "app", nil)
	apptest.Must(t, "list", err)
	if len(alerts) != 1 || alerts[0].GetSecurityAdvisory().GetGHSAID() != "GHSA-aaaa-bbbb-cccc" {
		t.Fatalf("alerts after the import: %d", len(alerts))
	}
}
