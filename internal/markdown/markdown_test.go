package markdown

import (
	"strings"
	"testing"
)

// TestRender: CommonMark with the platform's extensions, raw HTML left
// out; in GFM mode line breaks kept and the mentions and references
// Resolve knows linked, once each, and nothing inside code or links.
func TestRender(t *testing.T) {
	t.Parallel()
	out, err := Render([]byte("| a |\n|---|\n| ~~b~~ |\n\n- [x] done\n\nsee https://example.com <script>x</script>"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"<table>", "<del>b</del>", `<input checked="" disabled="" type="checkbox"`, `<a href="https://example.com">`, "<!-- raw HTML omitted -->"} {
		if !strings.Contains(string(out), want) {
			t.Errorf("markdown mode: %q lacks %q", out, want)
		}
	}

	var asked [][]string
	opts := Options{GFM: true, Resolve: func(logins []string, numbers []int64) (Resolved, error) {
		asked = append(asked, logins)
		if len(numbers) != 2 || numbers[0] != 2 || numbers[1] != 9 {
			t.Errorf("numbers %v, want [2 9]", numbers)
		}
		return Resolved{Users: map[string]string{"octo": "https://h/octo"},
			Issues: map[int64]Issue{2: {URL: "https://h/o/r/pull/2", PullRequest: true}}}, nil
	}}
	src := "Hi @octo and @nobody,\nsee #2, #9, #2 and @octo again.\n`@octo #2` mail a@octo.com [@octo](https://x) x#2"
	out, err = Render([]byte(src), opts)
	if err != nil {
		t.Fatal(err)
	}
	html := string(out)
	mention := `<a href="https://h/octo" class="user-mention notranslate" data-hovercard-type="user">@octo</a>`
	ref := `<a href="https://h/o/r/pull/2" class="issue-link js-issue-link" data-hovercard-type="pull_request" data-url="https://h/o/r/pull/2">#2</a>`
	if strings.Count(html, mention) != 2 || strings.Count(html, ref) != 2 {
		t.Errorf("gfm: want 2 mentions and 2 references linked:\n%s", html)
	}
	for _, want := range []string{"@nobody,<br>", "#9,", "<code>@octo #2</code>", "a@octo.com", `<a href="https://x">@octo</a>`, "x#2"} {
		if !strings.Contains(html, want) {
			t.Errorf("gfm: %q lacks %q", html, want)
		}
	}
	if len(asked) != 1 || len(asked[0]) != 2 {
		t.Errorf("Resolve asked %v, want once for [octo nobody]", asked)
	}
}
