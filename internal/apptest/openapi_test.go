package apptest

import (
	"net/http"
	"os"
	"strings"
	"testing"
)

// validatorForTest returns the shared validator; the test is skipped when
// the descriptions are not installed, except in CI, which installs them.
func validatorForTest(t *testing.T) *Validator {
	t.Helper()
	v := SharedValidator()
	if v == nil && raceDetector {
		t.Skip("the OpenAPI validation runs in the suite without the race detector")
	}
	if v == nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("CI runs without the OpenAPI descriptions (%s unset, testdata/node not installed)", OpenAPIDirEnv)
		}
		t.Skip("the platform's OpenAPI descriptions are not installed (npm ci in testdata/node)")
	}
	return v
}

// TestValidatorCatchesMismatches: the validator accepts a response as the
// description has it, refuses a wrong type, a missing required field and
// an undocumented status, reads the spec's header and path names as the
// platform's, and skips what no description has.
func TestValidatorCatchesMismatches(t *testing.T) {
	v := validatorForTest(t)
	check := func(method, path string, status int, body string, header ...string) error {
		req, err := http.NewRequest(method, "http://127.0.0.1:1"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return v.Check(req, status, h, []byte(body))
	}
	config := `{"content_type":"json","insecure_ssl":"0","url":"https://example.com/hook"}`
	if err := check("GET", "/repos/o/r/hooks/1/config", 200, config); err != nil {
		t.Fatalf("a valid webhook config: %v", err)
	}
	if err := check("GET", "/api/v3/repos/o/r/hooks/1/config", 200, config, "Content-Type", "application/vnd.service+json; charset=utf-8"); err != nil {
		t.Fatalf("under /api/v3 with the spec's media type: %v", err)
	}
	for name, c := range map[string]struct {
		path   string
		status int
		body   string
	}{
		"wrong type":                 {"/repos/o/r/hooks/1/config", 200, `{"content_type":"json","insecure_ssl":"0","url":5}`},
		"undocumented status":        {"/repos/o/r/hooks/1/config", 418, config},
		"missing required":           {"/orgs/o/hooks/1", 200, `{"id":1}`},
		"custom agents, path mapped": {"/enterprises/e/assistant/custom-agents", 200, `{"custom_agents":"nope"}`},
	} {
		err := check("GET", c.path, c.status, c.body)
		if err == nil {
			t.Errorf("%s: accepted", name)
			continue
		}
		if !strings.Contains(err.Error(), "does not match") {
			t.Errorf("%s: %v", name, err)
		}
	}
	validated, _ := v.Counts()
	for _, p := range []string{"/octo/hello.git/info/refs", "/raw/octo/hello/main/README.md", "/_blobs/k", "/docs/webhooks"} {
		if err := check("GET", p, 200, "binary"); err != nil {
			t.Fatalf("%s is skipped: %v", p, err)
		}
	}
	if err := check("GET", "/octo/hello.git/info/refs", 200, "binary"); err != nil {
		t.Fatalf("git is skipped: %v", err)
	}
	if err := check("GET", "/healthz", 200, `{}`); err != nil {
		t.Fatalf("health is skipped: %v", err)
	}
	if after, _ := v.Counts(); after != validated {
		t.Fatalf("skipped paths counted as validated (%d, then %d)", validated, after)
	}
}

// TestValidatorStatuses: an undocumented status passes only by a reasoned
// rule: a write's 422, the rate limits, an unsupported API version, a
// token without the scope, or a statusRules entry for that operation; a
// 500 never passes, a 401 or 404 only where the operation documents it
// or a rule names the operation.
func TestValidatorStatuses(t *testing.T) {
	v := validatorForTest(t)
	check := func(method, path string, status int, body string, header ...string) error {
		req, err := http.NewRequest(method, "http://127.0.0.1:1"+path, nil)
		if err != nil {
			t.Fatal(err)
		}
		h := http.Header{"Content-Type": {"application/json; charset=utf-8"}}
		for i := 0; i+1 < len(header); i += 2 {
			h.Set(header[i], header[i+1])
		}
		return v.Check(req, status, h, []byte(body))
	}
	e := func(msg string) string { return `{"message":"` + msg + `","documentation_url":"https://x/docs"}` }
	invalid := `{"message":"Validation Failed","errors":[{"resource":"Hook","field":"url","code":"invalid"}],"documentation_url":"https://x/docs"}`
	for name, c := range map[string]struct {
		method, path string
		status       int
		body         string
		header       []string
	}{
		"a write's 422":                 {"PATCH", "/repos/o/r/hooks/1/config", 422, invalid, nil},
		"a GET's 422 on its query":      {"GET", "/repos/o/r/hooks?per_page=x", 422, invalid, nil},
		"the rate limit":                {"GET", "/repos/o/r/hooks/1/config", 403, e("API rate limit exceeded for user."), []string{"X-Ratelimit-Remaining", "0"}},
		"a token without the scope":     {"GET", "/repos/o/r/hooks/1/config", 403, e("This token lacks the scope this endpoint needs; accepted scopes: repo."), []string{"X-Accepted-Oauth-Scopes", "repo"}},
		"a 404 with its rule":           {"GET", "/repos/o/r/hooks/1/config", 404, e("Not Found"), nil},
		"a 401 with its rule":           {"GET", "/repos/o/r", 401, e("Bad credentials"), nil},
		"a path no operation has, 404":  {"GET", "/octocat/hello", 404, e("Not Found"), nil},
		"a path parameter with slashes": {"GET", "/repos/o/r/contents/docs/guide.md", 404, e("Not Found"), nil},
	} {
		if err := check(c.method, c.path, c.status, c.body, c.header...); err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for name, c := range map[string]struct {
		method, path string
		status       int
		body         string
	}{
		"a 500":                                {"GET", "/repos/o/r/hooks/1/config", 500, e("Internal Server Error")},
		"a 401 the operation lacks, no rule":   {"GET", "/repos/o/r/hooks/1/config", 401, e("Bad credentials")},
		"a rule's status with another message": {"GET", "/repos/o/r", 401, e("Requires authentication")},
		"a 404 the operation lacks, no rule":   {"GET", "/user", 404, e("Not Found")},
		"a GET's 422 without a query":          {"GET", "/repos/o/r/hooks", 422, invalid},
		"a 403 without a reason":               {"GET", "/repos/o/r/hooks/1/config", 403, e("Forbidden")},
		"a 418":                                {"GET", "/repos/o/r/hooks/1/config", 418, e("I'm a teapot")},
		"an error status without an error":     {"PATCH", "/repos/o/r/hooks/1/config", 422, `{}`},
		"a path no description has, 200":       {"GET", "/octocat/hello", 200, `{}`},
	} {
		if err := check(c.method, c.path, c.status, c.body); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	req, err := http.NewRequestWithContext(InjectedFault(Ctx()), "PUT", "http://127.0.0.1:1/user/starred/o/r", nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := v.Check(req, 500, http.Header{"Content-Type": {"application/json"}}, []byte(e("Internal Server Error"))); err != nil {
		t.Errorf("the 500 of an injected fault: %v", err)
	}
}

// TestCheckWebhook: a delivery's body is validated against the schema of
// its event and action; a body without the required fields, and an event
// the description has no schema for, are mismatches.
func TestCheckWebhook(t *testing.T) {
	v := validatorForTest(t)
	validated, _ := v.Counts()
	if err := v.CheckWebhook("star", []byte(`{"action":"created"}`)); err == nil || !strings.Contains(err.Error(), "webhook-star-created") {
		t.Errorf("a star without its repository and sender: %v", err)
	}
	if err := v.CheckWebhook("org_block", []byte(`{"action":"blocked","blocked_user":5}`)); err == nil || !strings.Contains(err.Error(), "webhook-org-block-blocked") {
		t.Errorf("an org_block with a number for its user: %v", err)
	}
	// The self-managed edition's user event is in its description only.
	if err := v.CheckWebhook("user", []byte(`{"action":"created","user":5}`)); err == nil || !strings.Contains(err.Error(), "webhook-user-created") {
		t.Errorf("a user event with a number for its user: %v", err)
	}
	if err := v.CheckWebhook("no_such_event", []byte(`{}`)); err == nil || !strings.Contains(err.Error(), "no schema") {
		t.Errorf("an unknown event: %v", err)
	}
	if err := v.CheckWebhook("push", []byte(`not json`)); err == nil {
		t.Error("a body that is not JSON: accepted")
	}
	if after, _ := v.Counts(); after != validated+3 {
		t.Errorf("validated %d webhook bodies, want 3", after-validated)
	}
}
