package e2e_test

import (
	"bytes"
	"compress/gzip"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// finding is one result of a test SARIF: rule, file and line.
type finding struct {
	rule, path string
	line       int
}

// sarif is a SARIF 2.1.0 log of one run of tool "lint" with two rules
// and the findings, gzipped and base64-encoded as the API takes it.
func sarif(t *testing.T, findings ...finding) string {
	t.Helper()
	results := []map[string]any{}
	for _, f := range findings {
		results = append(results, map[string]any{
			"ruleId": f.rule, "message": map[string]any{"text": f.rule + " in " + f.path},
			"locations": []any{map[string]any{"physicalLocation": map[string]any{
				"artifactLocation": map[string]any{"uri": "file:///work/src/" + f.path},
				"region":           map[string]any{"startLine": f.line, "startColumn": 5, "endColumn": 12}}}},
		})
	}
	log := map[string]any{"version": "2.1.0", "$schema": "https://json.schemastore.org/sarif-2.1.0.json", "runs": []any{map[string]any{
		"tool": map[string]any{"driver": map[string]any{"name": "lint", "version": "1.2.0", "rules": []any{
			map[string]any{"id": "sql-injection", "name": "SqlInjection", "shortDescription": map[string]any{"text": "SQL injection"},
				"fullDescription": map[string]any{"text": "Building SQL from user input."}, "helpUri": "https://example.com/sql",
				"defaultConfiguration": map[string]any{"level": "error"},
				"properties":           map[string]any{"tags": []string{"security"}, "security-severity": "8.8"}},
			map[string]any{"id": "unused-var", "shortDescription": map[string]any{"text": "Unused variable"},
				"defaultConfiguration": map[string]any{"level": "note"}},
		}}},
		"automationDetails": map[string]any{"id": "lint/go/"},
		"results":           results,
	}}}
	raw, err := json.Marshal(log)
	apptest.Must(t, "marshal sarif", err)
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err = zw.Write(raw)
	apptest.Must(t, "gzip", err)
	apptest.Must(t, "gzip close", zw.Close())
	return base64.StdEncoding.EncodeToString(buf.Bytes())
}

// upload uploads a SARIF for the commit on main and waits until it is
// processed; it returns the upload's id.
func upload(t *testing.T, c *github.Client, sha, data string) string {
	t.Helper()
	id, _, err := c.CodeScanning.UploadSarif(apptest.Ctx(), "octo", "app", github.SarifAnalysis{CommitSHA: sha, Ref: "refs/heads/main",
		Sarif: data, CheckoutURI: github.Ptr("file:///work/src")})
	apptest.Must(t, "upload sarif", err)
	testwait.For(t, "sarif "+id.GetID(), func() error {
		u, _, err := c.CodeScanning.GetSARIF(apptest.Ctx(), "octo", "app", id.GetID())
		if err != nil {
			return err
		}
		if u.GetProcessingStatus() != "complete" {
			return fmt.Errorf("status %s", u.GetProcessingStatus())
		}
		return nil
	})
	return id.GetID()
}

// TestCodeScanning uploads analyses with go-github and follows their
// alerts: created from a first analysis, fixed when a later analysis of
// the same tool and ref no longer has one, reopened when it comes back,
// dismissed and reopened by a user, the analyses' deletion rules, the
// filters, and the checks of an upload.
func TestCodeScanning(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "app", apptest.RepoOpts{AdvancedSecurity: true})
	env.Repo(octo, "plain")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	rc := apptest.NewReceiver(t, "s")
	_, _, err := c.Repositories.CreateHook(ctx, "octo", "app", &github.Hook{Name: github.Ptr("web"), Events: []string{"code_scanning_alert"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "create hook", err)
	sha1, sha2, sha3 := strings.Repeat("a", 40), strings.Repeat("b", 40), strings.Repeat("c", 40)

	first := upload(t, c, sha1, sarif(t, finding{"sql-injection", "db/query.go", 10}, finding{"unused-var", "main.go", 3}))
	apptest.Step(t, "a first analysis makes alerts", func(t *testing.T) {
		alerts, _, err := c.CodeScanning.ListAlertsForRepo(ctx, "octo", "app", &github.AlertListOptions{})
		apptest.Must(t, "list alerts", err)
		if len(alerts) != 2 {
			t.Fatalf("alerts: %d", len(alerts))
		}
		sql, _, err := c.CodeScanning.GetAlert(ctx, "octo", "app", 1)
		apptest.Must(t, "get alert", err)
		r, in := sql.GetRule(), sql.GetMostRecentInstance()
		if sql.GetState() != "open" || r.GetID() != "sql-injection" || r.GetSeverity() != "error" || r.GetSecuritySeverityLevel() != "high" ||
			sql.GetTool().GetName() != "lint" || in.GetLocation().GetPath() != "db/query.go" || in.GetLocation().GetStartLine() != 10 ||
			in.GetCommitSHA() != sha1 || in.GetRef() != "refs/heads/main" || in.GetCategory() != "lint/go/" {
			t.Fatalf("alert: %+v", sql)
		}
		analyses, _, err := c.CodeScanning.ListAnalysesForRepo(ctx, "octo", "app", &github.AnalysesListOptions{SarifID: github.Ptr(first)})
		apptest.Must(t, "analyses", err)
		if len(analyses) != 1 || analyses[0].GetResultsCount() != 2 || analyses[0].GetRulesCount() != 2 || !analyses[0].GetDeletable() {
			t.Fatalf("analyses: %+v", analyses)
		}
		rc.WaitFor(t, describeAlert("code_scanning_alert"), "created #1", "created #2")
	})

	apptest.Step(t, "a later analysis without a finding fixes it, with it again reopens it", func(t *testing.T) {
		upload(t, c, sha2, sarif(t, finding{"sql-injection", "db/query.go", 10}))
		unused, _, err := c.CodeScanning.GetAlert(ctx, "octo", "app", 2)
		apptest.Must(t, "get", err)
		if unused.GetState() != "fixed" || unused.FixedAt == nil {
			t.Fatalf("unused-var after its fix: %s", unused.GetState())
		}
		fixed, _, err := c.CodeScanning.ListAlertsForRepo(ctx, "octo", "app", &github.AlertListOptions{State: "fixed"})
		apptest.Must(t, "fixed", err)
		if len(fixed) != 1 || fixed[0].GetNumber() != 2 {
			t.Fatalf("fixed alerts: %d", len(fixed))
		}
		instances, _, err := c.CodeScanning.ListAlertInstances(ctx, "octo", "app", 2, nil)
		apptest.Must(t, "instances", err)
		if len(instances) != 1 || instances[0].GetState() != "fixed" || instances[0].GetCommitSHA() != sha1 {
			t.Fatalf("instances: %+v", instances)
		}
		upload(t, c, sha3, sarif(t, finding{"sql-injection", "db/query.go", 10}, finding{"unused-var", "main.go", 3}))
		again, _, err := c.CodeScanning.GetAlert(ctx, "octo", "app", 2)
		apptest.Must(t, "get", err)
		if again.GetState() != "open" || again.GetMostRecentInstance().GetCommitSHA() != sha3 {
			t.Fatalf("unused-var back: %s", again.GetState())
		}
		rc.WaitFor(t, describeAlert("code_scanning_alert"), "fixed #2", "reopened #2")
	})

	apptest.Step(t, "dismissing and reopening", func(t *testing.T) {
		for _, body := range []string{`{"state":"dismissed"}`, `{"state":"dismissed","dismissed_reason":"nope"}`, `{"state":"closed"}`, `{}`,
			`{"state":"dismissed","dismissed_reason":"won't fix","dismissed_comment":"` + strings.Repeat("x", 281) + `"}`} {
			resp, b := env.DoJSON("PATCH", "/repos/octo/app/code-scanning/alerts/1", token, body)
			apptest.WantStatus(t, body, resp, b, http.StatusBadRequest)
		}
		a, _, err := c.CodeScanning.UpdateAlert(ctx, "octo", "app", 1, &github.CodeScanningAlertState{State: "dismissed",
			DismissedReason: github.Ptr("false positive"), DismissedComment: github.Ptr("the input is a constant")})
		apptest.Must(t, "dismiss", err)
		if a.GetState() != "dismissed" || a.GetDismissedBy().GetLogin() != "octo" || a.GetDismissedReason() != "false positive" ||
			a.GetMostRecentInstance().GetState() != "dismissed" {
			t.Fatalf("dismissed: %+v", a)
		}
		closed, _, err := c.CodeScanning.ListAlertsForRepo(ctx, "octo", "app", &github.AlertListOptions{State: "dismissed"})
		apptest.Must(t, "dismissed list", err)
		if len(closed) != 1 {
			t.Fatalf("dismissed alerts: %d", len(closed))
		}
		a, _, err = c.CodeScanning.UpdateAlert(ctx, "octo", "app", 1, &github.CodeScanningAlertState{State: "open"})
		apptest.Must(t, "reopen", err)
		if a.GetState() != "open" || a.DismissedBy != nil {
			t.Fatalf("reopened: %+v", a)
		}
		rc.WaitFor(t, describeAlert("code_scanning_alert"), "closed_by_user #1", "reopened_by_user #1")
		high, _, err := c.CodeScanning.ListAlertsForRepo(ctx, "octo", "app", &github.AlertListOptions{Severity: "high"})
		apptest.Must(t, "severity", err)
		if len(high) != 1 || high[0].GetNumber() != 1 {
			t.Fatalf("high: %d", len(high))
		}
	})

	apptest.Step(t, "deleting analyses", func(t *testing.T) {
		analyses, _, err := c.CodeScanning.ListAnalysesForRepo(ctx, "octo", "app", nil)
		apptest.Must(t, "analyses", err)
		if len(analyses) != 3 || !analyses[0].GetDeletable() || analyses[1].GetDeletable() {
			t.Fatalf("analyses: %d", len(analyses))
		}
		resp, b := env.Do("DELETE", fmt.Sprintf("/repos/octo/app/code-scanning/analyses/%d", analyses[1].GetID()), token, nil)
		apptest.WantStatus(t, "not the latest", resp, b, http.StatusBadRequest)
		del, _, err := c.CodeScanning.DeleteAnalysis(ctx, "octo", "app", analyses[0].GetID())
		apptest.Must(t, "delete latest", err)
		if !strings.HasSuffix(del.GetNextAnalysisURL(), fmt.Sprintf("/analyses/%d", analyses[1].GetID())) {
			t.Fatalf("next: %s", del.GetNextAnalysisURL())
		}
		// Without the third analysis, the second is the latest: unused-var is fixed again.
		unused, _, err := c.CodeScanning.GetAlert(ctx, "octo", "app", 2)
		apptest.Must(t, "get", err)
		if unused.GetState() != "fixed" {
			t.Fatalf("unused-var: %s", unused.GetState())
		}
	})

	apptest.Step(t, "what an upload is checked for", func(t *testing.T) {
		for name, body := range map[string]string{
			"short sha":  `{"commit_sha":"abc","ref":"refs/heads/main","sarif":"x"}`,
			"bad ref":    `{"commit_sha":"` + sha1 + `","ref":"main","sarif":"x"}`,
			"not base64": `{"commit_sha":"` + sha1 + `","ref":"refs/heads/main","sarif":"%%%"}`,
			"not gzip":   `{"commit_sha":"` + sha1 + `","ref":"refs/heads/main","sarif":"aGVsbG8="}`,
			"no sarif":   `{"commit_sha":"` + sha1 + `","ref":"refs/heads/main"}`,
		} {
			resp, b := env.DoJSON("POST", "/repos/octo/app/code-scanning/sarifs", token, body)
			apptest.WantStatus(t, name, resp, b, http.StatusBadRequest)
		}
		bad := base64.StdEncoding.EncodeToString(gz(t, `{"version":"1.0.0","runs":[]}`))
		id, _, err := c.CodeScanning.UploadSarif(ctx, "octo", "app", github.SarifAnalysis{CommitSHA: sha1, Ref: "refs/heads/main", Sarif: bad})
		apptest.Must(t, "upload a bad version", err)
		testwait.For(t, "the bad upload's failure", func() error {
			resp, b := env.Get("/repos/octo/app/code-scanning/sarifs/"+id.GetID(), "token "+token)
			if resp.StatusCode != http.StatusOK || !strings.Contains(string(b), `"failed"`) || !strings.Contains(string(b), "unsupported SARIF version") {
				return fmt.Errorf("%d %s", resp.StatusCode, b)
			}
			return nil
		})
		resp, b := env.DoJSON("POST", "/repos/octo/app/code-scanning/sarifs", token,
			`{"commit_sha":"`+sha1+`","ref":"refs/heads/main","sarif":"`+bad+`","validate":true}`)
		apptest.WantStatus(t, "validate", resp, b, http.StatusBadRequest)
		resp, b = env.Get("/repos/octo/plain/code-scanning/alerts", "token "+token)
		apptest.WantStatus(t, "without advanced security", resp, b, http.StatusForbidden)
		for _, q := range []string{"state=bad", "severity=huge", "sort=name", "direction=up", "pr=3"} {
			resp, b := env.Get("/repos/octo/app/code-scanning/alerts?"+q, "token "+token)
			apptest.WantStatus(t, q, resp, b, http.StatusUnprocessableEntity)
		}
		resp, b = env.Get("/repos/octo/app/code-scanning/sarifs/nope", "token "+token)
		apptest.WantStatus(t, "unknown upload", resp, b, http.StatusNotFound)
	})
}

func gz(t *testing.T, s string) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	_, err := zw.Write([]byte(s))
	apptest.Must(t, "gzip", err)
	apptest.Must(t, "gzip close", zw.Close())
	return buf.Bytes()
}

// TestCodeScanningOrgAlerts lists an organization's alerts for its
// owners, with their repositories; a member gets 404.
func TestCodeScanningOrgAlerts(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	boss, dev := env.User("boss"), env.User("dev")
	org := env.Org("acme", boss, dev)
	rockets := env.Repo(org, "rockets", apptest.RepoOpts{AdvancedSecurity: true})
	c := env.Client(env.Token(boss, "repo"))
	// A workflow's token uploads: an app installation's.
	ci := env.Client(env.InstallationToken(org, []*repos.Repository{rockets}, "security_events:write"))
	id, _, err := ci.CodeScanning.UploadSarif(ctx, "acme", "rockets", github.SarifAnalysis{CommitSHA: strings.Repeat("d", 40),
		Ref: "refs/heads/main", Sarif: sarif(t, finding{"sql-injection", "x.go", 1})})
	apptest.Must(t, "upload", err)
	testwait.For(t, "the upload", func() error {
		u, _, err := c.CodeScanning.GetSARIF(ctx, "acme", "rockets", id.GetID())
		if err != nil || u.GetProcessingStatus() != "complete" {
			return fmt.Errorf("%v %v", u, err)
		}
		return nil
	})
	alerts, _, err := c.CodeScanning.ListAlertsForOrg(ctx, "acme", nil)
	apptest.Must(t, "org alerts", err)
	if len(alerts) != 1 || alerts[0].GetRepository().GetFullName() != "acme/rockets" {
		t.Fatalf("org alerts: %+v", alerts)
	}
	resp, b := env.Get("/orgs/acme/code-scanning/alerts", "token "+env.Token(dev, "repo"))
	apptest.WantStatus(t, "member", resp, b, http.StatusNotFound)
}

// TestCodeScanningLeases checks the processor's work table: an upload
// leased by a server that died stays pending while its lease runs and is
// processed after ReleaseLeases; and fine-grained tokens need Code
// scanning alerts, write to upload.
func TestCodeScanningLeases(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	repo := env.Repo(octo, "app", apptest.RepoOpts{AdvancedSecurity: true})
	c := env.Client(env.Token(octo, "repo"))
	sha := strings.Repeat("e", 40)
	id := upload(t, c, sha, sarif(t, finding{"unused-var", "main.go", 1}))

	// Make the upload pending again, under a dead server's lease, with
	// its analysis gone: what a crash mid-processing leaves.
	_, err := env.App.DB.ExecContext(ctx, `DELETE FROM code_scanning_analyses WHERE sarif_id = $1`, id)
	apptest.Must(t, "forget the analysis", err)
	_, err = env.App.DB.ExecContext(ctx, `DELETE FROM code_scanning_alerts WHERE repository_id = $1`, repo.ID)
	apptest.Must(t, "forget the alerts", err)
	_, err = env.App.DB.ExecContext(ctx, `UPDATE code_scanning_sarifs SET status = 'pending', lease_owner = 'dead', lease_until = $1
		WHERE id = $2`, time.Now().Add(time.Hour).UTC(), id)
	apptest.Must(t, "lease", err)
	if n := env.App.SARIFs.RunOnce(ctx); n != 0 {
		t.Fatalf("an upload under another server's lease was processed: %d", n)
	}
	released, err := env.App.SARIFs.ReleaseLeases(ctx)
	apptest.Must(t, "release", err)
	if released != 1 {
		t.Fatalf("released %d, want 1", released)
	}
	env.App.SARIFs.RunOnce(ctx)
	testwait.For(t, "the upload processed again", func() error {
		alerts, _, err := c.CodeScanning.ListAlertsForRepo(ctx, "octo", "app", nil)
		if err != nil || len(alerts) != 1 {
			return fmt.Errorf("%d alerts, %v", len(alerts), err)
		}
		return nil
	})

	read := env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "security_events:read")
	resp, b := env.Get("/repos/octo/app/code-scanning/alerts", "token "+read)
	apptest.WantStatus(t, "read", resp, b, http.StatusOK)
	resp, b = env.DoJSON("POST", "/repos/octo/app/code-scanning/sarifs", read,
		`{"commit_sha":"`+sha+`","ref":"refs/heads/main","sarif":"`+sarif(t)+`"}`)
	apptest.WantStatus(t, "upload with read", resp, b, http.StatusForbidden)
	none := env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, "contents:read")
	resp, b = env.Get("/repos/octo/app/code-scanning/alerts", "token "+none)
	apptest.WantStatus(t, "no permission", resp, b, http.StatusForbidden)
}
