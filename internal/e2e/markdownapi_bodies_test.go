package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestBodyMediaTypes asks for issues, comments and releases in the
// platform's body media types: html adds body_html (mentions and #123
// linked in the repository's context), text body_text, full both, and
// the default form neither.
func TestBodyMediaTypes(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	first, _, err := c.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "First"})
	apptest.Must(t, "issue", err)
	_, _, err = c.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Second",
		Body: github.Ptr("Like #1, says @octo: **bold** & <script>x</script>")})
	apptest.Must(t, "issue", err)
	_, _, err = c.Issues.CreateComment(ctx, "octo", "hello", 2, github.IssueCommentRequest{Body: "_agreed_"})
	apptest.Must(t, "comment", err)

	get := func(path, accept string) map[string]any {
		t.Helper()
		resp, body := env.Do("GET", path, token, nil, "Accept", accept)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("%s (%s): %d %s", path, accept, resp.StatusCode, body)
		}
		var v any
		apptest.Must(t, "decode", json.Unmarshal(body, &v))
		if list, ok := v.([]any); ok {
			return list[0].(map[string]any)
		}
		return v.(map[string]any)
	}
	html := get("/repos/octo/hello/issues/2", "application/vnd.github.html+json")
	bodyHTML, _ := html["body_html"].(string)
	for _, want := range []string{"<strong>bold</strong>", `href="` + first.GetHTMLURL() + `"`, "/octo\"", "&amp;"} {
		if !strings.Contains(bodyHTML, want) {
			t.Errorf("body_html %q lacks %q", bodyHTML, want)
		}
	}
	if strings.Contains(bodyHTML, "<script>") || html["body_text"] != nil || html["title"] != "Second" {
		t.Errorf("html form: %v", html)
	}
	if text := get("/repos/octo/hello/issues/2", "application/vnd.service.text+json"); text["body_text"] != "Like #1, says @octo: bold & x" || text["body_html"] != nil {
		t.Errorf("text form: body_text %q, body_html %v", text["body_text"], text["body_html"])
	}
	full := get("/repos/octo/hello/issues/2/comments", "application/vnd.github.v3.full+json")
	if full["body"] != "_agreed_" || full["body_html"] != "<p><em>agreed</em></p>\n" || full["body_text"] != "agreed" {
		t.Errorf("full form: %v", full)
	}
	if raw := get("/repos/octo/hello/issues/2", "application/vnd.github+json"); raw["body_html"] != nil || raw["body_text"] != nil {
		t.Errorf("raw form: %v", raw)
	}
}
