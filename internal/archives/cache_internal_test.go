package archives

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestCacheBound keeps the cache under MaxBytes by removing the archives
// served least recently: a hit counts as served, and the archive just
// built stays.
func TestCacheBound(t *testing.T) {
	t.Parallel()
	gitDir, sha := bareRepository(t)
	clock := time.Unix(1_700_000_000, 0)
	c := &Cache{Dir: t.TempDir(), MaxBytes: 1 << 30, Now: func() time.Time { clock = clock.Add(time.Minute); return clock }}
	ctx := context.Background()
	open := func(prefix string) int64 {
		t.Helper()
		f, err := c.Open(ctx, gitDir, entry{repoID: 1, sha: sha, format: Tarball, prefix: prefix + "/"})
		if err != nil {
			t.Fatalf("open %s: %v", prefix, err)
		}
		defer f.Close()
		info, err := f.Stat()
		if err != nil {
			t.Fatal(err)
		}
		return info.Size()
	}
	a, b := open("a"), open("b")
	open("a") // a hit: b is now the least recently served
	c.MaxBytes = a + b + a/2
	open("c")
	for prefix, want := range map[string]bool{"a": true, "b": false, "c": true} {
		_, err := os.Stat(c.path(entry{repoID: 1, sha: sha, format: Tarball, prefix: prefix + "/"}))
		if (err == nil) != want {
			t.Errorf("archive %s kept: %v, want %v", prefix, err == nil, want)
		}
	}
	c.MaxBytes = 1
	if open("d") == 0 {
		t.Fatal("an archive over the bound is not served")
	}
	left, _ := filepath.Glob(filepath.Join(c.Dir, "1", "*"))
	if len(left) != 0 {
		t.Fatalf("left over the bound: %v", left)
	}
}

// bareRepository makes a bare repository with one commit of a few files.
func bareRepository(t *testing.T) (dir, sha string) {
	t.Helper()
	work, bare := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "GIT_CONFIG_NOSYSTEM=1", "HOME="+work, "GIT_AUTHOR_NAME=a", "GIT_AUTHOR_EMAIL=a@example.com",
		"GIT_COMMITTER_NAME=a", "GIT_COMMITTER_EMAIL=a@example.com")
	run := func(dir string, args ...string) string {
		cmd := exec.Command("git", args...)
		cmd.Dir, cmd.Env = dir, env
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	run(work, "init", "-q")
	for i := range 20 {
		if err := os.WriteFile(filepath.Join(work, "f"+string(rune('a'+i))), []byte(strings.Repeat("line\n", 100*i)), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	run(work, "add", ".")
	run(work, "commit", "-q", "-m", "files")
	run(bare, "init", "-q", "--bare")
	run(work, "push", "-q", bare, "HEAD:refs/heads/main")
	return bare, run(work, "rev-parse", "HEAD")
}
