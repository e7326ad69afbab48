package gitcmd_test

import (
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"

	"forgeapi/internal/git/gitcmd"
)

// commit writes an empty-tree commit with the parents into git's
// repository and returns its SHA.
func commit(t *testing.T, git gitcmd.Git, msg string, parents ...string) string {
	t.Helper()
	tree, err := git.Text(context.Background(), strings.NewReader(""), "mktree")
	if err != nil {
		t.Fatal(err)
	}
	args := []string{"commit-tree", tree, "-m", msg}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	sha, err := git.With("GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com").Text(context.Background(), nil, args...)
	if err != nil {
		t.Fatal(err)
	}
	return sha
}

func TestIsAncestorAnswersFromGitsExitStatus(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	if err := (gitcmd.Git{}).Run(ctx, "init", "--quiet", "--bare", dir); err != nil {
		t.Fatal(err)
	}
	git := gitcmd.In(dir)
	root := commit(t, git, "root")
	child := commit(t, git, "child", root)
	other := commit(t, git, "other")
	for _, c := range []struct {
		a, d string
		want bool
	}{{root, child, true}, {child, child, true}, {child, root, false}, {other, child, false}} {
		got, err := git.IsAncestor(ctx, c.a, c.d)
		if err != nil || got != c.want {
			t.Errorf("IsAncestor(%.7s, %.7s) = %v, %v; want %v", c.a, c.d, got, err, c.want)
		}
	}
	// A commit the repository does not hold is a failure, not a "no".
	if _, err := git.IsAncestor(ctx, strings.Repeat("1", 40), child); err == nil {
		t.Error("IsAncestor of a missing commit: no error")
	}
}

func TestErrorsQuoteGitAndUnwrapToTheExit(t *testing.T) {
	git := gitcmd.In(t.TempDir()) // not a repository
	err := git.Run(context.Background(), "rev-parse", "--verify", "HEAD")
	var gitErr *gitcmd.Error
	if !errors.As(err, &gitErr) || gitErr.Stderr == "" || !strings.HasPrefix(err.Error(), "git rev-parse: ") {
		t.Fatalf("err = %v; want a *gitcmd.Error quoting git's stderr", err)
	}
	if _, ok := errors.AsType[*exec.ExitError](err); !ok || !gitcmd.Exited(err) || gitcmd.Said(err, 1) {
		t.Errorf("err = %v: exit status not told (exited %v, said 1 %v)", err, gitcmd.Exited(err), gitcmd.Said(err, 1))
	}
	if err := (gitcmd.Git{Binary: "/nonexistent/git"}).Run(context.Background(), "version"); err == nil || gitcmd.Exited(err) {
		t.Errorf("a binary that does not start: err = %v, exited %v", err, gitcmd.Exited(err))
	}
}

func TestTheEnvironmentKeepsOutTheMachinesConfiguration(t *testing.T) {
	t.Setenv("GIT_CONFIG_GLOBAL", "/etc/passwd")
	t.Setenv("GIT_AUTHOR_NAME", "from the server's environment")
	env := strings.Join(gitcmd.In(t.TempDir()).Command(context.Background(), "version").Environ(), "\n")
	for _, want := range []string{"GIT_CONFIG_NOSYSTEM=1", "GIT_CONFIG_GLOBAL=/dev/null", "GIT_TERMINAL_PROMPT=0"} {
		if !strings.Contains(env, want) {
			t.Errorf("environment lacks %s:\n%s", want, env)
		}
	}
	if strings.Contains(env, "from the server's environment") {
		t.Errorf("the server's environment leaked into git's:\n%s", env)
	}
}
