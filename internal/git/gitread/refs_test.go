package gitread_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
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

// TestBranchTipAgreesWithGit reads branches loose, packed, packed under
// a newer loose value, deleted after packing, a name that is only a
// directory of other branches, broken, symbolic, and names git would not
// take: BranchTip answers as `git rev-parse --verify --quiet
// NAME^{commit}`, except a symbolic branch, which it leaves to git.
func TestBranchTipAgreesWithGit(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	a := w.commit("a", map[string]*string{"a.txt": str("a\n")})
	w.git("branch", "packed")
	w.git("branch", "moved")
	w.git("branch", "gone")
	w.git("branch", "feature/x")
	w.git("pack-refs", "--all")
	w.commit("b", map[string]*string{"b.txt": str("b\n")})
	w.git("branch", "-f", "moved", "HEAD") // loose over its packed value
	w.git("branch", "-D", "gone")
	w.git("symbolic-ref", "refs/heads/alias", "refs/heads/main")
	dir := w.gitDir()
	writeFile(t, filepath.Join(dir, "refs", "heads", "broken"), "not a sha\n")
	for _, name := range []string{"refs/heads/main", "refs/heads/packed", "refs/heads/moved", "refs/heads/gone",
		"refs/heads/feature", "refs/heads/feature/x", "refs/heads/broken", "refs/heads/none",
		"refs/heads/../config"} {
		want := strings.TrimSpace(w.gitAllowFail("rev-parse", "--verify", "--quiet", name+"^{commit}"))
		sha, found, err := gitread.BranchTip(dir, name)
		if err != nil || sha != want || found != (want != "") {
			t.Errorf("BranchTip(%s) = %q, %v, %v; git %q", name, sha, found, err, want)
		}
	}
	if got := w.git("rev-parse", "refs/heads/packed"); strings.TrimSpace(got) != a {
		t.Fatalf("packed branch at %s, want %s", got, a)
	}
	if _, _, err := gitread.BranchTip(dir, "refs/heads/alias"); !errors.Is(err, gitread.ErrNotPlainRef) {
		t.Errorf("symbolic branch: %v, want ErrNotPlainRef", err)
	}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}
