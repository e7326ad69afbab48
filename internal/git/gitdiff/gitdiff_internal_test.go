package gitdiff

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
)

// numstat is git diff --numstat output of files text files that add
// lines lines each, and one binary file.
func numstat(files, lines int) string {
	var b strings.Builder
	for i := range files {
		fmt.Fprintf(&b, "%d\t0\tf%d.txt\n", lines, i)
	}
	b.WriteString("-\t-\tlogo.png\n")
	return b.String()
}

// TestMeasure: a diff within both limits passes; one file or one line
// over is the platform's 406 for that limit (a binary file counts as a
// file without lines).
func TestMeasure(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name, numstat, resource, want string
	}{
		{"at the limits", numstat(MaxFiles-1, MaxLines/(MaxFiles-1)), "PullRequest", ""},
		{"a file too many", numstat(MaxFiles, 1), "PullRequest",
			"Sorry, the diff exceeded the maximum number of files (300). Consider using 'List pull requests files' API or locally cloning the repository instead."},
		{"a file too many in a commit", numstat(MaxFiles, 1), "Commit",
			"Sorry, the diff exceeded the maximum number of files (300). Consider locally cloning the repository instead."},
		{"a line too many", numstat(2, MaxLines/2) + "0\t1\trenamed => moved.txt\n", "Comparison",
			"Sorry, the diff exceeded the maximum number of lines (20000)"},
	} {
		err := measure(strings.NewReader(c.numstat), c.resource)
		switch {
		case c.want == "" && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want == "":
		case err == nil || err.Status != http.StatusNotAcceptable || err.Message != c.want || len(err.Errors) != 1 ||
			err.Errors[0].Resource != c.resource || err.Errors[0].Field != "diff" || err.Errors[0].Code != "too_large":
			t.Errorf("%s: %+v, want 406 %q", c.name, err, c.want)
		}
	}
}
