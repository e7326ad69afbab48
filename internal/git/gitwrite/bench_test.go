package gitwrite_test

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/git/gitwrite"
)

// BenchmarkCommit writes one new file per commit, each on the one
// before, into a repository of 1,000 commits (a pack), as
// BenchmarkPutContents in internal/repocontent does through the API.
func BenchmarkCommit(b *testing.B) {
	dir := initRepo(b)
	var stream strings.Builder
	for i := 1; i <= 1000; i++ {
		fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter Bench <bench@example.com> %d +0000\ndata 9\ncommit %02d\n", 1700000000+i, i%100)
		content := fmt.Sprintf("version %d\n", i)
		fmt.Fprintf(&stream, "M 100644 inline hot.txt\ndata %d\n%s\n", len(content), content)
		if i == 1 {
			for j := range 100 {
				fmt.Fprintf(&stream, "M 100644 inline big-dir/file-%04d.txt\ndata 2\n%02d\n", j, j%100)
			}
		}
	}
	cmd := exec.Command("git", "--git-dir="+dir, "fast-import", "--quiet")
	cmd.Stdin = strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	head := git(b, dir, nil, "rev-parse", "refs/heads/main")
	who := gitwrite.Identity{Name: "Bench", Email: "bench@example.com", When: time.Now()}
	ctx := context.Background()
	i := 0
	for b.Loop() {
		i++
		c := gitwrite.Change{Parent: head, Path: fmt.Sprintf("new/file-%d.txt", i), Content: []byte("hello\n"),
			Message: "add a file", Author: who, Committer: who}
		next, _, err := gitwrite.Commit(ctx, dir, c)
		if err != nil {
			b.Fatal(err)
		}
		head = next
	}
}

// BenchmarkWriteTree writes a tree as POST .../git/trees does: base_tree
// a 10,000-file tree (100 directories of 100 files), a new file and a
// changed file in nested directories and a deletion. Each iteration also
// makes the same tree with git's plumbing (read-tree, update-index,
// write-tree with a temporary index: the work a server running git would
// do), and the benchmark reports the ratio of the two times
// (gitwrite/git, under 1 is faster) with each time per tree.
func BenchmarkWriteTree(b *testing.B) {
	dir := initRepo(b)
	var stream strings.Builder
	fmt.Fprintf(&stream, "commit refs/heads/main\ncommitter Bench <bench@example.com> 1700000000 +0000\ndata 5\nseed\n")
	for d := range 100 {
		for f := range 100 {
			content := fmt.Sprintf("file %d/%d\n", d, f)
			fmt.Fprintf(&stream, "M 100644 inline dir-%03d/file-%03d.txt\ndata %d\n%s\n", d, f, len(content), content)
		}
	}
	cmd := exec.Command("git", "--git-dir="+dir, "fast-import", "--quiet")
	cmd.Stdin = strings.NewReader(stream.String())
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("git fast-import: %v\n%s", err, out)
	}
	base := git(b, dir, nil, "rev-parse", "refs/heads/main^{tree}")
	ctx := context.Background()
	index, worktree := filepath.Join(b.TempDir(), "index"), b.TempDir()
	var own, ref time.Duration
	i := 0
	for b.Loop() {
		i++
		blob, err := gitwrite.WriteBlob(dir, []byte(fmt.Sprintf("new %d\n", i)))
		if err != nil {
			b.Fatal(err)
		}
		edits := []gitwrite.TreeEdit{
			{Path: "dir-050/file-007.txt", Mode: gitwrite.ModeFile, SHA: blob},
			{Path: "docs/new/notes.md", Mode: gitwrite.ModeFile, SHA: blob},
			{Path: "dir-099/file-099.txt", Delete: true},
		}
		start := time.Now()
		got, err := gitwrite.WriteTree(ctx, dir, base, edits)
		if err != nil {
			b.Fatal(err)
		}
		own += time.Since(start)

		start = time.Now()
		env := []string{"GIT_INDEX_FILE=" + index, "GIT_WORK_TREE=" + worktree}
		gitEnv(b, dir, env, "read-tree", base)
		gitEnv(b, dir, env, "update-index", "--add", "--cacheinfo", "100644,"+blob+",dir-050/file-007.txt",
			"--cacheinfo", "100644,"+blob+",docs/new/notes.md", "--force-remove", "dir-099/file-099.txt")
		want := gitEnv(b, dir, env, "write-tree")
		ref += time.Since(start)
		if got != want {
			b.Fatalf("tree %s, git %s", got, want)
		}
	}
	b.ReportMetric(float64(own.Nanoseconds())/float64(i), "gitwrite-ns/tree")
	b.ReportMetric(float64(ref.Nanoseconds())/float64(i), "git-ns/tree")
	b.ReportMetric(float64(own)/float64(ref), "ratio")
}

// gitEnv runs git in the bare repository dir with extra environment.
func gitEnv(b *testing.B, dir string, env []string, args ...string) string {
	b.Helper()
	cmd := exec.Command("git", args...)
	cmd.Env = append(append(os.Environ(), "GIT_DIR="+dir, "GIT_CONFIG_NOSYSTEM=1", "HOME="+dir), env...)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("git %s: %v %s", strings.Join(args, " "), err, out)
	}
	return strings.TrimSpace(string(out))
}
