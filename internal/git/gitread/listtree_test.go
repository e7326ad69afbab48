package gitread_test

import (
	"encoding/hex"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/go-git/go-git/v5/storage/filesystem"

	"forgeapi/internal/git/gitread"
)

// TestListTreeMatchesGoGit checks that ListTree, which reads raw tree
// objects itself, lists what go-git's Tree decoding gives (as gitread
// listed directories before): names, paths, SHAs, types by go-git's
// canonical modes (non-canonical ones included), blob sizes, in tree
// order; and that the trees go-git refuses as malformed are errors.
func TestListTreeMatchesGoGit(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	blob := func(content string) string { return w.gitInput(content, "hash-object", "-w", "--stdin") }
	rawTree := func(raw string) string {
		return w.gitInput(raw, "hash-object", "-w", "-t", "tree", "--literally", "--stdin")
	}
	entry := func(mode, name, sha string) string {
		h, err := hex.DecodeString(sha)
		if err != nil {
			t.Fatal(err)
		}
		return mode + " " + name + "\x00" + string(h)
	}
	a, exe, link := blob("a\n"), blob("#!/bin/sh\nexit 0\n"), blob("a.txt")
	inner := rawTree(entry("100644", "inner.txt", a))
	odd := rawTree(strings.Join([]string{
		entry("100644", "a.txt", a), entry("100755", "run.sh", exe), entry("100664", "group.txt", a),
		entry("120000", "link", link), entry("40000", "dir", inner), entry("160000", "sub", strings.Repeat("12", 20)),
		entry("0", "zero", a), entry("100644", "é ü.txt", exe), entry("100644", "with space", a), entry("100644", "日本", link),
	}, ""))

	storage := filesystem.NewStorage(osfs.New(w.gitDir()), cache.NewObjectLRUDefault())
	want := func(sha, dir string) []gitread.Entry {
		tree, err := object.GetTree(storage, plumbing.NewHash(sha))
		if err != nil {
			t.Fatal(err)
		}
		var out []gitread.Entry
		for _, te := range tree.Entries {
			e := gitread.Entry{Name: te.Name, Path: path.Join(dir, te.Name), SHA: te.Hash.String(), Type: gitread.EntryFile}
			switch te.Mode {
			case filemode.Dir:
				e.Type = gitread.EntryDir
			case filemode.Submodule:
				e.Type = gitread.EntrySubmodule
			case filemode.Symlink:
				e.Type = gitread.EntrySymlink
			}
			if e.Type == gitread.EntryFile || e.Type == gitread.EntrySymlink {
				if e.Size, err = storage.EncodedObjectSize(te.Hash); err != nil {
					t.Fatal(err)
				}
			}
			out = append(out, e)
		}
		return out
	}
	r := open(t, w.gitDir())
	for _, sha := range []string{odd, inner} {
		for _, dir := range []string{"", "d", "deep/é dir"} {
			got, err := r.ListTree(sha, dir)
			if w := want(sha, dir); err != nil || !slices.Equal(got, w) {
				t.Errorf("ListTree(%s, %q) = %+v, %v\nwant %+v", sha, dir, got, err, w)
			}
		}
	}
	if got, _ := r.ListTree(odd, ""); len(got) != 10 || got[2].Type != gitread.EntryFile || got[6].Type != gitread.EntrySubmodule {
		t.Errorf("modes 100664 and 0: %+v", got)
	}

	for name, raw := range map[string]string{
		"truncated id":     "100644 a.txt\x00" + strings.Repeat("x", 10),
		"no name end":      "100644 a.txt",
		"empty name":       "100644 \x00" + strings.Repeat("x", 20),
		"bad mode":         "10x644 a\x00" + strings.Repeat("x", 20),
		"no mode end":      entry("100644", "a", a) + "100644",
		"mode over 32 bit": "77777777777 a\x00" + strings.Repeat("x", 20),
	} {
		sha := rawTree(raw)
		if _, err := object.GetTree(storage, plumbing.NewHash(sha)); err == nil {
			t.Fatalf("%s: go-git reads the tree", name)
		}
		if got, err := r.ListTree(sha, ""); err == nil {
			t.Errorf("%s: ListTree = %+v, want an error", name, got)
		}
	}
}

// TestOpenSharedSizes checks that openings of a repository sharing their
// blob sizes list alike, also at once from two goroutines (run with
// -race), and that a later opening sees objects added since.
func TestOpenSharedSizes(t *testing.T) {
	t.Parallel()
	w := newWorkRepo(t)
	w.commit("files", map[string]*string{"a.txt": str("a\n"), "b.txt": str("bb\n"), "d/c.txt": str("ccc\n")})
	sizes := gitread.NewSizes()
	first, err := gitread.OpenShared(w.gitDir(), sizes)
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	want, err := first.ListDir("main", "")
	if err != nil {
		t.Fatal(err)
	}
	second, err := gitread.OpenShared(w.gitDir(), first.Sizes())
	if err != nil {
		t.Fatal(err)
	}
	defer second.Close()
	done := make(chan []gitread.Entry)
	go func() {
		got, _ := second.ListDir("main", "")
		done <- got
	}()
	again, err := first.ListDir("main", "")
	if got := <-done; err != nil || !slices.Equal(got, want) || !slices.Equal(again, want) {
		t.Fatalf("shared sizes: %+v and %+v, %v; want %+v", got, again, err, want)
	}
	w.commit("more", map[string]*string{"a.txt": str("longer a\n")})
	third, err := gitread.OpenShared(w.gitDir(), sizes)
	if err != nil {
		t.Fatal(err)
	}
	defer third.Close()
	got, err := third.ListDir("main", "")
	if err != nil || len(got) != 3 || got[0].Name != "a.txt" || got[0].Size != 9 || got[1].Size != 3 {
		t.Fatalf("after a commit: %+v, %v", got, err)
	}
}
