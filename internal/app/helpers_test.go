package app_test

import (
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// errorBody is the JSON shape of every error response.
type errorBody struct {
	Message          string `json:"message"`
	DocumentationURL string `json:"documentation_url"`
	Status           string `json:"status"`
	Errors           []struct {
		Resource string `json:"resource"`
		Field    string `json:"field"`
		Code     string `json:"code"`
		Message  string `json:"message"`
	} `json:"errors"`
}

// wantError checks that a response is a JSON error with the status, in
// the common shape, and returns its body.
func wantError(t *testing.T, what string, resp *http.Response, body []byte, status int) errorBody {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("%s: Content-Type %q", what, ct)
	}
	var e errorBody
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%s: error body is not JSON: %v: %s", what, err, body)
	}
	if e.Message == "" || e.DocumentationURL == "" || e.Status != strconv.Itoa(status) {
		t.Fatalf("%s: error body %s lacks message, documentation_url or status %d", what, body, status)
	}
	return e
}

// wantFieldError checks that e names the field with the code.
func wantFieldError(t *testing.T, what string, e errorBody, resource, field, code string) {
	t.Helper()
	for _, f := range e.Errors {
		if f.Resource == resource && f.Field == field && f.Code == code {
			return
		}
	}
	t.Fatalf("%s: errors %+v lack {resource %q field %q code %q}", what, e.Errors, resource, field, code)
}

// basic is an Authorization header value for HTTP Basic.
func basic(login, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+secret))
}

// get sends a GET with an Authorization header value (may be "").
func get(env *apptest.Env, path, authorization string, headers ...string) (*http.Response, []byte) {
	env.T.Helper()
	if authorization != "" {
		headers = append(headers, "Authorization", authorization)
	}
	return env.Do("GET", path, "", nil, headers...)
}

// wantStatus fails unless the response has the status.
func wantStatus(t *testing.T, what string, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, resp.StatusCode, status, body)
	}
}

// repoNames decodes a repository list into its full names.
func repoNames(t *testing.T, body []byte) []string {
	t.Helper()
	var list []struct {
		FullName string `json:"full_name"`
	}
	if err := json.Unmarshal(body, &list); err != nil {
		t.Fatalf("repository list: %v: %s", err, body)
	}
	names := make([]string, len(list))
	for i, r := range list {
		names[i] = r.FullName
	}
	return names
}

func sameNames(got []string, want ...string) bool {
	g, w := slices.Clone(got), slices.Clone(want)
	slices.Sort(g)
	slices.Sort(w)
	return slices.Equal(g, w)
}

func hasLinkRel(link, rel string) bool { return strings.Contains(link, `rel="`+rel+`"`) }

// quietLogger discards the server's log.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
