package apptest

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strconv"
	"testing"
)

// ErrorBody is the JSON shape of every error response.
type ErrorBody struct {
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

// WantError checks that a response is a JSON error with the status, in
// the common shape (message, documentation_url, status), and returns its
// body; it fails the test at once otherwise.
func WantError(t testing.TB, what string, resp *http.Response, body []byte, status int) ErrorBody {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, resp.StatusCode, status, body)
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/json; charset=utf-8" {
		t.Fatalf("%s: Content-Type %q", what, ct)
	}
	var e ErrorBody
	if err := json.Unmarshal(body, &e); err != nil {
		t.Fatalf("%s: error body is not JSON: %v: %s", what, err, body)
	}
	if e.Message == "" || e.DocumentationURL == "" || e.Status != strconv.Itoa(status) {
		t.Fatalf("%s: error body %s lacks message, documentation_url or status %d", what, body, status)
	}
	return e
}

// WantStatus fails the test at once unless the response has the status.
func WantStatus(t testing.TB, what string, resp *http.Response, body []byte, status int) {
	t.Helper()
	if resp.StatusCode != status {
		t.Fatalf("%s: status %d, want %d; body %s", what, resp.StatusCode, status, body)
	}
}

// Basic is an Authorization header value for HTTP Basic.
func Basic(login, secret string) string {
	return "Basic " + base64.StdEncoding.EncodeToString([]byte(login+":"+secret))
}

// Get sends a GET with an Authorization header value ("" for none) and
// the other headers, as name, value pairs.
func (e *Env) Get(path, authorization string, headers ...string) (*http.Response, []byte) {
	e.T.Helper()
	if authorization != "" {
		headers = append(headers, "Authorization", authorization)
	}
	return e.Do("GET", path, "", nil, headers...)
}
