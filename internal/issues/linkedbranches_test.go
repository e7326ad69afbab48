package issues_test

import (
	"testing"

	"forgeapi/internal/git/gitref"
	"forgeapi/internal/issues"
)

// TestLinkedBranchName: the default name of a linked branch is the
// issue's number and its title in lower case, each run of other
// characters than ASCII letters and digits one hyphen, and is a valid
// branch name whatever the title.
func TestLinkedBranchName(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		number int64
		title  string
		want   string
	}{
		{12, "Fix the login page!", "12-fix-the-login-page"},
		{3, "  [Bug] crash on /api/v3 -- 2.0  ", "3-bug-crash-on-api-v3-2-0"},
		{7, "Übergröße ändern", "7-bergr-e-ndern"},
		{8, "...", "8"},
		{9, "refs/heads/x..y@{1}", "9-refs-heads-x-y-1"},
	} {
		got := issues.LinkedBranchName(c.number, c.title)
		if got != c.want || !gitref.ValidBranch(got) {
			t.Errorf("LinkedBranchName(%d, %q) = %q (valid %v), want %q", c.number, c.title, got, gitref.ValidBranch(got), c.want)
		}
	}
}
