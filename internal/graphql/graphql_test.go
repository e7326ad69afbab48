package graphql_test

import (
	"encoding/json"
	"net/http"
	"testing"

	"forgeapi/internal/apptest"
)

// TestViewerQuery: the viewer query is answered for whoever the
// credentials authenticate; any other query gets a GraphQL error saying
// forgeapi serves the REST API; no credentials is a 401.
func TestViewerQuery(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	token := env.Token(octo)
	for _, q := range []string{"query UserCurrent{viewer{login}}", "{ viewer { login, databaseId # id\n name } }", "query { viewer { login url id } }"} {
		body, _ := json.Marshal(map[string]string{"query": q})
		resp, out := env.DoJSON("POST", "/api/graphql", token, string(body))
		var r struct {
			Data struct {
				Viewer map[string]any `json:"viewer"`
			} `json:"data"`
			Errors []any `json:"errors"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &r) != nil || r.Data.Viewer["login"] != "octo" || len(r.Errors) != 0 {
			t.Fatalf("%q: %d %s", q, resp.StatusCode, out)
		}
	}
	for _, q := range []string{"{ repository(owner:\"o\", name:\"r\") { id } }", "{ viewer { login email } }", "mutation { x }", ""} {
		body, _ := json.Marshal(map[string]string{"query": q})
		resp, out := env.DoJSON("POST", "/api/graphql", token, string(body))
		var r struct {
			Data   any              `json:"data"`
			Errors []map[string]any `json:"errors"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(out, &r) != nil || r.Data != nil || len(r.Errors) != 1 {
			t.Errorf("%q: %d %s, want one GraphQL error", q, resp.StatusCode, out)
		}
	}
	if resp, _ := env.DoJSON("POST", "/api/graphql", "", `{"query":"{viewer{login}}"}`); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("anonymous: %d, want 401", resp.StatusCode)
	}
}
