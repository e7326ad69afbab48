package e2e_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// Fake secrets in the patterns' formats (none of them is a live credential).
const (
	ghToken = "ghp_" + "aBcDeFgHiJkLmNoPqRsTuVwXyZ0123456789"
	awsKey  = "AKIA" + "IOSFODNN7EXAMPLE"
)

// waitScanned waits until the repository has no push left to scan.
func waitScanned(t *testing.T, env *apptest.Env, repo *repos.Repository) {
	t.Helper()
	testwait.For(t, "the scan of "+repo.Name, func() error {
		var n int
		if err := env.App.DB.QueryRowContext(context.Background(), `SELECT count(*) FROM secret_scanning_work
			WHERE repository_id = $1`, repo.ID).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return fmt.Errorf("%d pushes to scan", n)
		}
		return nil
	})
}

// describe names a secret scanning delivery: "alert created #1
// github_personal_access_token", "location created #1 config/app.env".
func describeSecretScanning(d apptest.Delivery) string {
	var p struct {
		Action string `json:"action"`
		Alert  struct {
			Number     int64  `json:"number"`
			SecretType string `json:"secret_type"`
		} `json:"alert"`
		Location struct {
			Details struct {
				Path string `json:"path"`
			} `json:"details"`
		} `json:"location"`
	}
	if json.Unmarshal(d.Body, &p) != nil {
		return ""
	}
	switch d.Event {
	case "secret_scanning_alert":
		return fmt.Sprintf("alert %s #%d %s", p.Action, p.Alert.Number, p.Alert.SecretType)
	case "secret_scanning_alert_location":
		return fmt.Sprintf("location %s #%d %s", p.Action, p.Alert.Number, p.Location.Details.Path)
	}
	return ""
}

// TestSecretScanning pushes secrets to a repository with advanced
// security and follows them: alerts and locations found by the scanner,
// their webhooks, a second place of a known secret, a new branch of
// scanned commits, the list's filters, resolving and reopening with their
// validation, and the 404 of a repository without secret scanning.
func TestSecretScanning(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, eve := env.User("octo"), env.User("eve")
	repo := env.Repo(octo, "app", apptest.RepoOpts{AdvancedSecurity: true})
	plain := env.Repo(octo, "plain")
	token := env.Token(octo, "repo")
	c := env.Client(token)

	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "app", &github.Hook{Name: github.Ptr("web"),
		Events: []string{"secret_scanning_alert", "secret_scanning_alert_location"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "create hook", err)

	own := auth.NewToken(auth.KindClassic)
	work := apptest.WorkTree(t, nil)
	remote := env.GitURL("octo", "app", "octo", token)
	first := apptest.Commit(t, work, "config", map[string]string{
		"README.md":      "no secrets here; ghp_tooShort and xghp_" + ghToken[4:] + "x are not tokens\n",
		"config/app.env": "# settings\nGITHUB_TOKEN=" + ghToken + "\nAWS_ACCESS_KEY_ID=" + awsKey + "\n",
		"deploy.sh":      "curl -H 'Authorization: token " + own + "' ...\n",
	})
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
	waitScanned(t, env, repo)

	var gh, aws, mine *github.SecretScanningAlert
	apptest.Step(t, "the push's secrets are alerts", func(t *testing.T) {
		alerts, _, err := c.SecretScanning.ListAlertsForRepo(ctx, "octo", "app", &github.SecretScanningAlertListOptions{Direction: "asc"})
		apptest.Must(t, "list alerts", err)
		if len(alerts) != 3 {
			t.Fatalf("alerts: %d, want 3", len(alerts))
		}
		for _, a := range alerts {
			switch a.GetSecretType() {
			case "github_personal_access_token":
				gh = a
			case "aws_access_key_id":
				aws = a
			case "forgeapi_personal_access_token":
				mine = a
			}
		}
		if gh == nil || aws == nil || mine == nil {
			t.Fatalf("secret types: %v", alerts)
		}
		if gh.GetSecret() != ghToken || aws.GetSecret() != awsKey || mine.GetSecret() != own || gh.GetState() != "open" ||
			gh.GetSecretTypeDisplayName() != "GitHub Personal Access Token" {
			t.Fatalf("alert: %+v", gh)
		}
		locs, _, err := c.SecretScanning.ListLocationsForAlert(ctx, "octo", "app", int64(gh.GetNumber()), nil)
		apptest.Must(t, "locations", err)
		if len(locs) != 1 {
			t.Fatalf("locations: %d", len(locs))
		}
		d := locs[0].Details
		if locs[0].GetType() != "commit" || d.GetPath() != "config/app.env" || d.GetStartline() != 2 || d.GetEndLine() != 2 ||
			d.GetStartColumn() != 14 || d.GetEndColumn() != 54 || d.GetCommitSHA() != first ||
			!strings.HasSuffix(d.GetCommitURL(), "/repos/octo/app/git/commits/"+first) {
			t.Fatalf("location: %+v", d)
		}
		blob := strings.TrimSpace(apptest.Git(t, work, "rev-parse", first+":config/app.env"))
		if d.GetBlobSHA() != blob {
			t.Fatalf("blob sha %s, want %s", d.GetBlobSHA(), blob)
		}
		rc.WaitFor(t, describeSecretScanning, fmt.Sprintf("alert created #%d github_personal_access_token", gh.GetNumber()),
			fmt.Sprintf("location created #%d config/app.env", gh.GetNumber()),
			fmt.Sprintf("alert created #%d aws_access_key_id", aws.GetNumber()),
			fmt.Sprintf("alert created #%d forgeapi_personal_access_token", mine.GetNumber()),
			fmt.Sprintf("location created #%d deploy.sh", mine.GetNumber()))
	})

	apptest.Step(t, "a known secret in a new place is a new location", func(t *testing.T) {
		apptest.Commit(t, work, "copy", map[string]string{"scripts/ci.sh": "export TOKEN=" + ghToken + "\n"})
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
		waitScanned(t, env, repo)
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/copy") // a new branch of scanned commits
		waitScanned(t, env, repo)
		alerts, _, err := c.SecretScanning.ListAlertsForRepo(ctx, "octo", "app", nil)
		apptest.Must(t, "list alerts", err)
		if len(alerts) != 3 {
			t.Fatalf("alerts: %d, want 3", len(alerts))
		}
		locs, _, err := c.SecretScanning.ListLocationsForAlert(ctx, "octo", "app", int64(gh.GetNumber()), nil)
		apptest.Must(t, "locations", err)
		if len(locs) != 2 || locs[1].Details.GetPath() != "scripts/ci.sh" {
			t.Fatalf("locations: %d", len(locs))
		}
		rc.WaitFor(t, describeSecretScanning, fmt.Sprintf("location created #%d scripts/ci.sh", gh.GetNumber()))
		if got := len(rc.Described(describeSecretScanning)); got != 7 {
			t.Fatalf("deliveries: %v", rc.Described(describeSecretScanning))
		}
	})

	apptest.Step(t, "resolving and reopening", func(t *testing.T) {
		path := fmt.Sprintf("/repos/octo/app/secret-scanning/alerts/%d", aws.GetNumber())
		for _, body := range []string{`{"state":"resolved"}`, `{"state":"resolved","resolution":"nope"}`,
			`{"state":"open","resolution":"revoked"}`, `{"state":"closed"}`, `{}`} {
			resp, b := env.DoJSON("PATCH", path, token, body)
			apptest.WantStatus(t, body, resp, b, http.StatusUnprocessableEntity)
		}
		resp, b := env.DoJSON("PATCH", path, token, `{"state":"resolved","resolution":"revoked","resolution_comment":"`+strings.Repeat("x", 281)+`"}`)
		apptest.WantStatus(t, "long comment", resp, b, http.StatusBadRequest)

		a, _, err := c.SecretScanning.UpdateAlert(ctx, "octo", "app", int64(aws.GetNumber()), &github.SecretScanningAlertUpdateOptions{
			State: "resolved", Resolution: github.Ptr("revoked"), ResolutionComment: github.Ptr("rotated")})
		apptest.Must(t, "resolve", err)
		if a.GetState() != "resolved" || a.GetResolution() != "revoked" || a.GetResolvedBy().GetLogin() != "octo" ||
			a.GetResolutionComment() != "rotated" || a.ResolvedAt == nil {
			t.Fatalf("resolved alert: %+v", a)
		}
		resolved, _, err := c.SecretScanning.ListAlertsForRepo(ctx, "octo", "app", &github.SecretScanningAlertListOptions{State: "resolved"})
		apptest.Must(t, "list resolved", err)
		if len(resolved) != 1 || resolved[0].GetNumber() != aws.GetNumber() {
			t.Fatalf("resolved: %d", len(resolved))
		}
		byRes, _, err := c.SecretScanning.ListAlertsForRepo(ctx, "octo", "app", &github.SecretScanningAlertListOptions{Resolution: "false_positive,wont_fix"})
		apptest.Must(t, "list by resolution", err)
		if len(byRes) != 0 {
			t.Fatalf("false positives: %d", len(byRes))
		}
		_, _, err = c.SecretScanning.UpdateAlert(ctx, "octo", "app", int64(aws.GetNumber()), &github.SecretScanningAlertUpdateOptions{State: "open"})
		apptest.Must(t, "reopen", err)
		rc.WaitFor(t, describeSecretScanning, fmt.Sprintf("alert resolved #%d aws_access_key_id", aws.GetNumber()),
			fmt.Sprintf("alert reopened #%d aws_access_key_id", aws.GetNumber()))
		got, _, err := c.SecretScanning.GetAlert(ctx, "octo", "app", int64(aws.GetNumber()))
		apptest.Must(t, "get", err)
		if got.GetState() != "open" || got.Resolution != nil || got.ResolvedBy != nil {
			t.Fatalf("reopened alert: %+v", got)
		}
	})

	apptest.Step(t, "filters", func(t *testing.T) {
		typed, _, err := c.SecretScanning.ListAlertsForRepo(ctx, "octo", "app", &github.SecretScanningAlertListOptions{SecretType: "aws_access_key_id,npm_access_token"})
		apptest.Must(t, "by type", err)
		if len(typed) != 1 || typed[0].GetSecretType() != "aws_access_key_id" {
			t.Fatalf("by type: %d", len(typed))
		}
		updated, _, err := c.SecretScanning.ListAlertsForRepo(ctx, "octo", "app", &github.SecretScanningAlertListOptions{Sort: "updated"})
		apptest.Must(t, "sort updated", err)
		if updated[0].GetNumber() != aws.GetNumber() {
			t.Fatalf("most recently updated: #%d", updated[0].GetNumber())
		}
		page, resp, err := c.SecretScanning.ListAlertsForRepo(ctx, "octo", "app", &github.SecretScanningAlertListOptions{ListOptions: github.ListOptions{PerPage: 2}})
		apptest.Must(t, "page", err)
		if len(page) != 2 || resp.NextPage != 2 {
			t.Fatalf("page: %d, next %d", len(page), resp.NextPage)
		}
		leaked, _, err := c.SecretScanning.ListAlertsForRepo(ctx, "octo", "app", &github.SecretScanningAlertListOptions{IsPubliclyLeaked: true})
		apptest.Must(t, "publicly leaked", err)
		if len(leaked) != 0 {
			t.Fatalf("publicly leaked: %d", len(leaked))
		}
		resp2, b := env.Get("/repos/octo/app/secret-scanning/alerts?hide_secret=true", "token "+token)
		apptest.WantStatus(t, "hide_secret", resp2, b, http.StatusOK)
		if strings.Contains(string(b), ghToken) || strings.Contains(string(b), `"secret"`) {
			t.Fatalf("hide_secret shows the secret: %s", b)
		}
		for _, q := range []string{"state=closed", "resolution=nope", "sort=name", "direction=up", "validity=bad", "before=abc"} {
			resp, b := env.Get("/repos/octo/app/secret-scanning/alerts?"+q, "token "+token)
			apptest.WantStatus(t, q, resp, b, http.StatusUnprocessableEntity)
		}
	})

	apptest.Step(t, "scan history", func(t *testing.T) {
		resp, b := env.Get("/repos/octo/app/secret-scanning/scan-history", "token "+token)
		apptest.WantStatus(t, "scan history", resp, b, http.StatusOK)
		var h struct {
			Incremental []struct {
				Type, Status string
				CompletedAt  *string `json:"completed_at"`
			} `json:"incremental_scans"`
		}
		apptest.Must(t, "decode", json.Unmarshal(b, &h))
		if len(h.Incremental) != 1 || h.Incremental[0].Status != "completed" || h.Incremental[0].CompletedAt == nil {
			t.Fatalf("scan history: %s", b)
		}
		resp, b = env.Get("/repos/octo/plain/secret-scanning/scan-history", "token "+token)
		apptest.WantStatus(t, "scan history without secret scanning", resp, b, http.StatusNotFound)
	})

	apptest.Step(t, "access and a repository without secret scanning", func(t *testing.T) {
		resp, b := env.Get("/repos/octo/plain/secret-scanning/alerts", "token "+token)
		apptest.WantStatus(t, "disabled", resp, b, http.StatusNotFound)
		if !strings.Contains(string(b), "Secret scanning is disabled on this repository.") {
			t.Fatalf("disabled: %s", b)
		}
		resp, b = env.Get("/repos/octo/app/secret-scanning/alerts/999", "token "+token)
		apptest.WantStatus(t, "no alert", resp, b, http.StatusNotFound)
		resp, b = env.Get("/repos/octo/app/secret-scanning/alerts", "token "+env.Token(eve, "repo"))
		apptest.WantStatus(t, "stranger", resp, b, http.StatusNotFound)

		pw := apptest.WorkTree(t, nil)
		apptest.Commit(t, pw, "leak", map[string]string{"a.env": ghToken + "\n"})
		apptest.Git(t, pw, "push", "-q", env.GitURL("octo", "plain", "octo", token), "HEAD:refs/heads/main")
		var n int
		apptest.Must(t, "count", env.App.DB.QueryRowContext(ctx, `SELECT count(*) FROM secret_scanning_alerts WHERE repository_id = $1`, plain.ID).Scan(&n))
		if n != 0 {
			t.Fatalf("alerts of a repository without secret scanning: %d", n)
		}
	})
}

// TestSecretScanningOrgAndEnterprise lists an organization's and an
// enterprise's alerts with their repositories, for owners only.
func TestSecretScanningOrgAndEnterprise(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	boss, dev := env.User("boss"), env.User("dev")
	org := env.Org("acme", boss, dev)
	env.Enterprise("bigco", boss, org)
	repo := env.Repo(org, "rockets", apptest.RepoOpts{AdvancedSecurity: true})
	token := env.Token(boss, "repo", "admin:enterprise")

	work := apptest.WorkTree(t, nil)
	apptest.Commit(t, work, "leak", map[string]string{"slack.txt": "xoxb-1234567890-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("acme", "rockets", "boss", token), "HEAD:refs/heads/main")
	waitScanned(t, env, repo)

	c := env.Client(token)
	alerts, _, err := c.SecretScanning.ListAlertsForOrg(ctx, "acme", nil)
	apptest.Must(t, "org alerts", err)
	if len(alerts) != 1 || alerts[0].GetSecretType() != "slack_api_token" || alerts[0].GetRepository().GetFullName() != "acme/rockets" {
		t.Fatalf("org alerts: %+v", alerts)
	}
	ent, _, err := c.SecretScanning.ListAlertsForEnterprise(ctx, "bigco", nil)
	apptest.Must(t, "enterprise alerts", err)
	if len(ent) != 1 || ent[0].GetRepository().GetFullName() != "acme/rockets" {
		t.Fatalf("enterprise alerts: %+v", ent)
	}
	resp, b := env.Get("/orgs/acme/secret-scanning/alerts", "token "+env.Token(dev, "repo"))
	apptest.WantStatus(t, "a member", resp, b, http.StatusNotFound)
}

// TestSecretScanningLeases checks the scanner's work table: a push leased
// by a server that died is left alone while its lease runs and scanned
// once it expired, or at once after ReleaseLeases; and fine-grained
// tokens need the Secret scanning alerts permission, write to update.
func TestSecretScanningLeases(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "app", apptest.RepoOpts{AdvancedSecurity: true})
	token := env.Token(octo, "repo")

	// A commit the server never scanned: pushed while the scanner's row
	// is taken away, as a crash between the push and the scan leaves it.
	work := apptest.WorkTree(t, nil)
	head := apptest.Commit(t, work, "leak", map[string]string{"a.env": "KEY=" + awsKey + "\n"})
	apptest.Git(t, work, "push", "-q", env.GitURL("octo", "app", "octo", token), "HEAD:refs/heads/main")
	waitScanned(t, env, repo)
	_, err := env.App.DB.ExecContext(ctx, `DELETE FROM secret_scanning_alerts WHERE repository_id = $1`, repo.ID)
	apptest.Must(t, "forget the alerts", err)
	_, err = env.App.DB.ExecContext(ctx, `DELETE FROM secret_scanning_commits WHERE repository_id = $1`, repo.ID)
	apptest.Must(t, "forget the scan", err)
	_, err = env.App.DB.ExecContext(ctx, `INSERT INTO secret_scanning_work (repository_id, before_sha, after_sha, lease_owner, lease_until, created_at)
		VALUES ($1, $2, $3, 'dead', $4, $5)`, repo.ID, strings.Repeat("0", 40), head, time.Now().Add(time.Hour).UTC(), time.Now().UTC())
	apptest.Must(t, "a leased push", err)

	count := func() int {
		var n int
		apptest.Must(t, "count", env.App.DB.QueryRowContext(ctx, `SELECT count(*) FROM secret_scanning_alerts WHERE repository_id = $1`, repo.ID).Scan(&n))
		return n
	}
	if n := env.App.SecretScanner.RunOnce(ctx); n != 0 || count() != 0 {
		t.Fatalf("a push under another server's lease was scanned: %d runs, %d alerts", n, count())
	}
	released, err := env.App.SecretScanner.ReleaseLeases(ctx)
	apptest.Must(t, "release", err)
	if released != 1 {
		t.Fatalf("released %d leases, want 1", released)
	}
	env.App.SecretScanner.RunOnce(ctx)
	waitScanned(t, env, repo)
	if count() != 1 {
		t.Fatalf("alerts after the lease ended: %d", count())
	}

	readOnly := env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "secret_scanning_alerts:read")
	none := env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "contents:read")
	resp, b := env.Get("/repos/octo/app/secret-scanning/alerts", "token "+readOnly)
	apptest.WantStatus(t, "read permission", resp, b, http.StatusOK)
	resp, b = env.Get("/repos/octo/app/secret-scanning/alerts", "token "+none)
	apptest.WantStatus(t, "no permission", resp, b, http.StatusForbidden)
	resp, b = env.DoJSON("PATCH", "/repos/octo/app/secret-scanning/alerts/1", readOnly, `{"state":"resolved","resolution":"revoked"}`)
	apptest.WantStatus(t, "update with read", resp, b, http.StatusForbidden)
}
