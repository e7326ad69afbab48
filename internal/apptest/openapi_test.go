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
