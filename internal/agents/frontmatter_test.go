package agents

import (
	"strings"
	"testing"
)

func TestAgentName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, file, content, want string
	}{
		{"no front matter", "reviewer.md", "# Reviewer\n\nReviews code.\n", "reviewer"},
		{"empty file", "empty.md", "", "empty"},
		{"plain name", "x.md", "---\nname: Security Reviewer\ndescription: checks\n---\nbody\n", "Security Reviewer"},
		{"double quoted", "x.md", "---\nname: \"Security: Reviewer \\u00e9\"\n---\n", "Security: Reviewer é"},
		{"single quoted", "x.md", "---\nname: 'It''s mine'\n---\n", "It's mine"},
		{"trimmed", "x.md", "---\nname:    spaced out   \n---\n", "spaced out"},
		{"CRLF", "x.md", "---\r\nname: Windows Agent\r\ntools: [a, b]\r\n---\r\nbody\r\n", "Windows Agent"},
		{"BOM", "x.md", "\uFEFF---\nname: BOM Agent\n---\n", "BOM Agent"},
		{"BOM and CRLF", "x.md", "\uFEFF---\r\nname: Both\r\n---\r\n", "Both"},
		{"dots close", "x.md", "---\nname: Dotted\n...\nbody\n", "Dotted"},
		{"markers with trailing blanks", "x.md", "---  \nname: Blank\n--- \t\n", "Blank"},
		{"closed at end of file", "x.md", "---\nname: Last\n---", "Last"},
		{"number", "x.md", "---\nname: 42\n---\n", "42"},
		{"alias", "x.md", "---\nbase: &n Aliased\nname: *n\n---\n", "Aliased"},
		{"folded block", "x.md", "---\nname: >\n  Long\n  name\n---\n", "Long name"},
		{"malformed elsewhere, name line kept", "x.md", "---\nname: Kept\ndescription: reviews: security\n---\n", "Kept"},
		{"malformed name line", "bad.md", "---\nname: [unclosed\n---\n", "bad"},
		{"unclosed front matter", "open.md", "---\nname: Never closed\nbody\n", "open"},
		{"not at the start", "late.md", "\n---\nname: Late\n---\n", "late"},
		{"name is a list", "list.md", "---\nname: [a, b]\n---\n", "list"},
		{"name is a map", "map.md", "---\nname:\n  first: a\n---\n", "map"},
		{"null name", "null.md", "---\nname: ~\n---\n", "null"},
		{"empty name", "blank.md", "---\nname: \"  \"\n---\n", "blank"},
		{"no name key", "nokey.md", "---\ndescription: d\n---\n", "nokey"},
		{"nested name only", "nested.md", "---\nmeta:\n  name: Inner\n---\n", "nested"},
		{"front matter is a list", "seq.md", "---\n- name: a\n---\n", "seq"},
		{"empty front matter", "void.md", "---\n---\nbody", "void"},
		{"only a marker", "marker.md", "---", "marker"},
		{"file named .md", ".md", "no front matter", ".md"},
		{"horizontal rule later", "hr.md", "# Title\n\n---\n\nname: not front matter\n---\n", "hr"},
	} {
		if got := agentName(c.file, []byte(c.content)); got != c.want {
			t.Errorf("%s: agentName(%q) = %q, want %q", c.name, c.content, got, c.want)
		}
	}
}

func TestFrontMatterTooLargeIsIgnored(t *testing.T) {
	t.Parallel()
	content := "---\nname: Big\ndescription: " + strings.Repeat("x", maxFrontMatterBytes) + "\n---\n"
	if got := agentName("big.md", []byte(content)); got != "big" {
		t.Errorf("agentName of an oversized front matter = %q, want the file name", got)
	}
}

func FuzzAgentName(f *testing.F) {
	for _, seed := range []string{"", "---\nname: a\n---\n", "\uFEFF---\r\nname: 'x'\r\n...\r\n", "---\nname: &a [*a]\n---\n", "---\n: :\n---"} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, content string) {
		if got := agentName("f.md", []byte(content)); got == "" {
			t.Errorf("agentName(%q) is empty", content)
		}
	})
}
