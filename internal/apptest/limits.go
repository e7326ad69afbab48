package apptest

import (
	"encoding/json"
	"net/http"
	"testing"

	"forgeapi/internal/apierr"
)

// WantTooLong checks that a response is the 422 of a string over its
// length limit: errors[] holds apierr.TooLong(resource, field, max)
// (code "custom", "<field> is too long (maximum is <max> characters)").
func WantTooLong(t testing.TB, what string, resp *http.Response, body []byte, resource, field string, max int) {
	t.Helper()
	want := apierr.TooLong(resource, field, max)
	var e struct {
		Message string              `json:"message"`
		Errors  []apierr.FieldError `json:"errors"`
	}
	if resp.StatusCode != http.StatusUnprocessableEntity || json.Unmarshal(body, &e) != nil || e.Message != "Validation Failed" {
		t.Errorf("%s: %d %.300s, want 422 Validation Failed", what, resp.StatusCode, body)
		return
	}
	for _, got := range e.Errors {
		if got.Resource == want.Resource && got.Field == want.Field && got.Code == want.Code && got.Message == want.Message {
			return
		}
	}
	t.Errorf("%s: errors %+v lack %+v", what, e.Errors, want)
}
