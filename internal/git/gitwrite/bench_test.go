package gitwrite_test

import (
	"context"
	"fmt"
	"os/exec"
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
