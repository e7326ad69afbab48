package app

import "testing"

// TestChangePath maps the web addresses of diffs and patches to their
// API paths, escaped, and refuses the others.
func TestChangePath(t *testing.T) {
	t.Parallel()
	for rest, want := range map[string]string{
		"pull/12.diff":                       "/repos/o/r/pulls/12 diff",
		"pull/12.patch":                      "/repos/o/r/pulls/12 patch",
		"commit/abc123.diff":                 "/repos/o/r/commits/abc123 diff",
		"compare/main...topic/x.patch":       "/repos/o/r/compare/main...topic%2Fx patch",
		"compare/v1.0...v2.0.diff":           "/repos/o/r/compare/v1.0...v2.0 diff",
		"pull/12":                            "",
		"pull/12.txt":                        "",
		"pull/x.diff":                        "",
		"pull/.diff":                         "",
		"pull/12/files.diff":                 "",
		"commit/a/b.diff":                    "",
		"pulls/12.diff":                      "",
		"info/refs":                          "",
		"compare/.diff":                      "",
		"tree/main/README.md.diff.something": "",
	} {
		path, f, ok := changePath("o", "r", rest)
		got := ""
		if ok {
			got = path + " " + string(f)
		}
		if got != want {
			t.Errorf("%s: %q, want %q", rest, got, want)
		}
	}
}
