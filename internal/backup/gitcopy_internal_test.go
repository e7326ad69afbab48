package backup

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"testing"
)

// git runs git in dir (a work tree, or a bare repository with --git-dir)
// with fixed identities and no user configuration.
func git(t *testing.T, dir string, args ...string) {
	t.Helper()
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + dir, "GIT_CONFIG_NOSYSTEM=1", "PATH=" + os.Getenv("PATH"),
		"GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com", "GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com"}
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Errorf("git %v: %v\n%s", args, err, out)
	}
}

// TestCopyRepositoryWhileGitGCRuns copies a bare repository, each time
// just after a push added hundreds of loose objects and a branch to it,
// while git gc packs them, removes the loose ones and the packs it
// replaced, and packs the references: every copy is whole (git fsck
// --full finds nothing missing).
func TestCopyRepositoryWhileGitGCRuns(t *testing.T) {
	t.Parallel()
	bare := filepath.Join(t.TempDir(), "src.git")
	work := t.TempDir()
	git(t, work, "init", "-q", "--bare", bare)
	git(t, bare, "--git-dir="+bare, "config", "receive.unpackLimit", "100000") // pushes land as loose objects
	git(t, work, "init", "-q", "-b", "main")
	for round := range 2 {
		for i := range 400 {
			name := filepath.Join(work, "f"+strconv.Itoa(i))
			if err := os.WriteFile(name, []byte(strconv.Itoa(round*10000+i)), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		git(t, work, "add", ".")
		git(t, work, "commit", "-qm", "round "+strconv.Itoa(round))
		git(t, work, "push", "-q", bare, "main", "main:refs/heads/b"+strconv.Itoa(round))
		var wg sync.WaitGroup
		wg.Go(func() { git(t, bare, "--git-dir="+bare, "gc", "-q") })
		c := newCopier(filepath.Join(t.TempDir(), strconv.Itoa(round)))
		gone, err := c.copyRepository(context.Background(), bare, "copy.git")
		wg.Wait()
		if err != nil || gone {
			t.Fatalf("copy %d: gone %v, %v", round, gone, err)
		}
		if err := runGit(context.Background(), c.path("copy.git"), "fsck", "--full", "--no-dangling", "--no-progress"); err != nil {
			t.Errorf("copy %d: %v", round, err)
		}
	}
}
