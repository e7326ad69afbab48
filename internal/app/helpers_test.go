package app_test

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"testing"

	"forgeapi/internal/apptest"
)

// errorBody is the JSON shape of every error response.
type errorBody = apptest.ErrorBody

// wantError checks that a response is a JSON error with the status, in
// the common shape, and returns its body.
func wantError(t *testing.T, what string, resp *http.Response, body []byte, status int) errorBody {
	t.Helper()
	return apptest.WantError(t, what, resp, body, status)
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
func basic(login, secret string) string { return apptest.Basic(login, secret) }

// get sends a GET with an Authorization header value (may be "").
func get(env *apptest.Env, path, authorization string, headers ...string) (*http.Response, []byte) {
	env.T.Helper()
	return env.Get(path, authorization, headers...)
}

// wantStatus fails unless the response has the status.
func wantStatus(t *testing.T, what string, resp *http.Response, body []byte, status int) {
	t.Helper()
	apptest.WantStatus(t, what, resp, body, status)
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
