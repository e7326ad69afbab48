package gitwrite_test

import (
	"context"
	"os/exec"
	"testing"
	"time"

	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitwrite"
)

// TestCommitWritesObjectsWithoutMovingRefs: a root commit, a change on
// it and a deletion are written as objects; no reference moves.
func TestCommitWritesObjectsWithoutMovingRefs(t *testing.T) {
	dir := t.TempDir()
	if out, err := exec.Command("git", "init", "-q", "--bare", dir).CombinedOutput(); err != nil {
		t.Fatalf("git init: %v %s", err, out)
	}
	ctx := context.Background()
	who := gitwrite.Identity{Name: "Octo", Email: "octo@example.com", When: time.Unix(1700000000, 0)}
	root, blob, err := gitwrite.Commit(ctx, dir, gitwrite.Change{Path: "docs/a.md", Content: []byte("a\n"), Message: "add a", Author: who, Committer: who})
	if err != nil || blob == "" {
		t.Fatalf("root commit: %v", err)
	}
	next, _, err := gitwrite.Commit(ctx, dir, gitwrite.Change{Parent: root, Path: "b.txt", Content: []byte("b\n"), Message: "add b", Author: who, Committer: who})
	if err != nil {
		t.Fatal(err)
	}
	gone, _, err := gitwrite.Commit(ctx, dir, gitwrite.Change{Parent: next, Path: "docs/a.md", Delete: true, Message: "remove a", Author: who, Committer: who})
	if err != nil {
		t.Fatal(err)
	}
	g, err := gitread.Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if data, err := g.ReadFile(next, "docs/a.md"); err != nil || string(data) != "a\n" {
		t.Fatalf("a at the second commit: %q %v", data, err)
	}
	if _, err := g.ReadFile(gone, "docs/a.md"); err == nil {
		t.Fatal("a still there after its deletion")
	}
	if data, err := g.ReadFile(gone, "b.txt"); err != nil || string(data) != "b\n" {
		t.Fatalf("b after the deletion: %q %v", data, err)
	}
	c, err := g.CommitObject(gone)
	if err != nil || c.Message != "remove a\n" && c.Message != "remove a" || len(c.ParentSHAs) != 1 || c.ParentSHAs[0] != next || c.AuthorEmail != "octo@example.com" {
		t.Fatalf("commit %+v %v", c, err)
	}
	if branches, _ := g.Branches(); len(branches) != 0 {
		t.Fatalf("a reference moved: %v", branches)
	}
}
