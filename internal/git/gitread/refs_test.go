package gitread_test

import (
	"os"
	"path/filepath"
	"slices"
	"testing"

	"forgeapi/internal/git/gitread"
)

// TestRefListingsSkipLockFiles lists references while git writes some
// (the lock files it creates beside them: an empty one, as when git has
// just created it, and a filled one, about to be renamed over its
// reference), with packed references, a loose reference that overrides
// its packed value and a symbolic one: every listing gives the references
// as git does, and never fails or lists a lock file.
func TestRefListingsSkipLockFiles(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	a := w.commit("a", map[string]*string{"a.txt": str("a\n")})
	w.git("tag", "-a", "-m", "annotated", "v1")
	w.git("branch", "packed")
	w.git("branch", "moved")
	w.git("pack-refs", "--all")
	b := w.commit("b", map[string]*string{"b.txt": str("b\n")})
	w.git("update-ref", "refs/heads/moved", b) // loose over its packed value a
	w.git("update-ref", "refs/pull/1/head", a)
	w.git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
	dir := w.gitDir()
	for name, content := range map[string]string{
		"refs/heads/main.lock":     "",       // created, not yet written
		"refs/heads/new.lock":      a + "\n", // written, not yet renamed
		"refs/tags/v2.lock":        "",
		"refs/heads/moved.lock":    a + "\n",
		"refs/heads/topic/x.lock":  "",
		"packed-refs.lock":         "",
		"refs/heads/broken-lock/a": "", // an empty reference file: broken, skipped as git does
	} {
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	r := open(t, dir)

	branches, err := r.Branches()
	if err != nil {
		t.Fatalf("Branches: %v", err)
	}
	want := []gitread.Ref{{Name: "main", SHA: b}, {Name: "moved", SHA: b}, {Name: "packed", SHA: a}}
	if !slices.Equal(branches, want) {
		t.Errorf("Branches = %v, want %v", branches, want)
	}
	refs, err := r.Refs("refs/")
	if err != nil {
		t.Fatalf("Refs: %v", err)
	}
	var names []string
	for _, ref := range refs {
		names = append(names, ref.Name+" "+ref.Type)
	}
	wantNames := []string{"refs/heads/main commit", "refs/heads/moved commit", "refs/heads/packed commit",
		"refs/pull/1/head commit", "refs/tags/v1 tag"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("Refs(refs/) = %v, want %v", names, wantNames)
	}
	if tags, err := r.Tags(); err != nil || len(tags) != 1 || tags[0].Name != "v1" || tags[0].CommitSHA != a {
		t.Errorf("Tags = %+v, %v; want v1 at %s", tags, err, a)
	}
	commits, err := r.RefCommits()
	if err != nil {
		t.Fatalf("RefCommits: %v", err)
	}
	slices.Sort(commits)
	wantCommits := []string{a, b}
	slices.Sort(wantCommits)
	if !slices.Equal(commits, wantCommits) {
		t.Errorf("RefCommits = %v, want %v", commits, wantCommits)
	}
	if at, err := r.BranchesAt(a); err != nil || !slices.Equal(at, []string{"refs/heads/packed"}) {
		t.Errorf("BranchesAt(a) = %v, %v; want [refs/heads/packed]", at, err)
	}
	if at, err := r.BranchesAt(b); err != nil || !slices.Equal(at, []string{"refs/heads/main", "refs/heads/moved"}) {
		t.Errorf("BranchesAt(b) = %v, %v; want main and moved", at, err)
	}
}
