package e2e_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestRenderMarkdown renders through go-github's Markdown.Render: gfm
// mode links the mentions of existing accounts and the references to
// the context repository's issues, only for a caller who may read that
// repository; markdown mode links neither; /markdown/raw takes the text
// as the body; bad bodies are 422.
func TestRenderMarkdown(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo := env.User("octo")
	env.User("hubot")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	owner := env.Client(env.Token(octo, "repo"))
	ctx := apptest.Ctx()
	_, _, err := owner.Issues.Create(ctx, "octo", "secret", github.CreateIssueRequest{Title: "one"})
	apptest.Must(t, "create issue", err)

	text := "Thanks @octo and @ghost, see #1 and #7."
	html, _, err := owner.Markdown.Render(ctx, text, &github.MarkdownOptions{Mode: "gfm", Context: "octo/secret"})
	apptest.Must(t, "render gfm", err)
	for _, want := range []string{`<a href="` + env.URL + `/octo" class="user-mention notranslate"`, "@ghost,",
		`<a href="` + env.URL + `/octo/secret/issues/1" class="issue-link js-issue-link" data-hovercard-type="issue"`, "#7."} {
		if !strings.Contains(html, want) {
			t.Errorf("gfm: %s\nlacks %s", html, want)
		}
	}
	// Another user may not read octo/secret: its references stay text.
	other := env.Client(env.Token(env.User("mona"), "repo"))
	html, _, err = other.Markdown.Render(ctx, text, &github.MarkdownOptions{Mode: "gfm", Context: "octo/secret"})
	apptest.Must(t, "render as another user", err)
	if strings.Contains(html, "/issues/1") || !strings.Contains(html, "user-mention") {
		t.Errorf("gfm for a reader of nothing: %s", html)
	}
	html, _, err = owner.Markdown.Render(ctx, "**hi** @octo #1", nil)
	apptest.Must(t, "render markdown", err)
	if html != "<p><strong>hi</strong> @octo #1</p>\n" {
		t.Errorf("markdown mode: %q", html)
	}

	resp, body := env.Do("POST", "/markdown/raw", "", strings.NewReader("# Title"), "Content-Type", "text/plain")
	if resp.StatusCode != http.StatusOK || string(body) != "<h1>Title</h1>\n" || !strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
		t.Errorf("raw: %d %q %s", resp.StatusCode, body, resp.Header.Get("Content-Type"))
	}
	for _, bad := range []string{`{}`, `{"text": "x", "mode": "html"}`} {
		if resp, body := env.DoJSON("POST", "/markdown", "", bad); resp.StatusCode != http.StatusUnprocessableEntity {
			t.Errorf("%s: %d %s", bad, resp.StatusCode, body)
		}
	}
}
