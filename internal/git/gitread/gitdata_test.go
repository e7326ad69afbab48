package gitread_test

import (
	"errors"
	"strings"
	"testing"

	"forgeapi/internal/git/gitread"
)

// TestTreeSHAByName: a tree is found by a tree's or a commit's SHA and by
// a branch, tag (annotated too) or full reference name, "/" included;
// anything else is ErrPathNotFound.
func TestTreeSHAByName(t *testing.T) {
	w := newWorkRepo(t)
	head := w.commit("one", map[string]*string{"a/b.txt": str("b\n")})
	tree := w.git("rev-parse", head+"^{tree}")
	w.git("branch", "feature/x")
	w.git("tag", "-a", "-m", "v1", "v1.0", head)
	w.git("tag", "light", head)
	g, err := gitread.Open(w.gitDir())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	for _, name := range []string{tree, head, "main", "feature/x", "refs/heads/feature/x", "v1.0", "light", head[:7]} {
		if got, err := g.TreeSHA(name); err != nil || got != tree {
			t.Errorf("TreeSHA(%q) = %s, %v; want %s", name, got, err, tree)
		}
	}
	blob := w.git("rev-parse", head+":a/b.txt")
	for _, name := range []string{"nope", "feature", "a..b", blob, strings.Repeat("0", 40), ""} {
		if _, err := g.TreeSHA(name); !errors.Is(err, gitread.ErrPathNotFound) {
			t.Errorf("TreeSHA(%q): %v, want ErrPathNotFound", name, err)
		}
	}
}

// TestAnnotatedTagAndSignatures: an annotated tag reads back with its
// target and tagger; a signed commit's and a signed tag's signatures and
// payloads are the object's header (or trailer) and the object without
// it.
func TestAnnotatedTagAndSignatures(t *testing.T) {
	w := newWorkRepo(t)
	head := w.commit("one", map[string]*string{"a.txt": str("a\n")})
	w.git("tag", "-a", "-m", "release one", "v1", head)
	sha := w.git("rev-parse", "refs/tags/v1")
	sig := "-----BEGIN PGP SIGNATURE-----\n\nabc\n-----END PGP SIGNATURE-----\n"
	raw := w.git("cat-file", "commit", head)
	headers, message, _ := strings.Cut(raw, "\n\n")
	signedCommit := w.gitInput(headers+"\ngpgsig "+strings.ReplaceAll(strings.TrimSuffix(sig, "\n"), "\n", "\n ")+"\n\n"+message+"\n",
		"hash-object", "-t", "commit", "-w", "--stdin")
	tagRaw := w.git("cat-file", "tag", sha)
	signedTag := w.gitInput(tagRaw+"\n"+sig, "hash-object", "-t", "tag", "-w", "--stdin")

	g, err := gitread.Open(w.gitDir())
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	tag, err := g.AnnotatedTag(sha)
	if err != nil {
		t.Fatal(err)
	}
	if tag.Name != "v1" || tag.ObjectSHA != head || tag.ObjectType != "commit" || tag.Message != "release one\n" ||
		tag.TaggerEmail != "carl@example.com" || tag.Signature != "" {
		t.Errorf("tag %+v", tag)
	}
	if _, err := g.AnnotatedTag(head); !errors.Is(err, gitread.ErrPathNotFound) {
		t.Errorf("a commit as a tag: %v", err)
	}
	c, err := g.CommitObject(signedCommit)
	if err != nil {
		t.Fatal(err)
	}
	if c.Signature != sig || c.Payload != raw+"\n" {
		t.Errorf("signed commit: signature %q payload %q; want %q and %q", c.Signature, c.Payload, sig, raw+"\n")
	}
	if plain, _ := g.CommitObject(head); plain.Signature != "" || plain.Payload != "" {
		t.Errorf("unsigned commit: %q %q", plain.Signature, plain.Payload)
	}
	st, err := g.AnnotatedTag(signedTag)
	if err != nil {
		t.Fatal(err)
	}
	if st.Signature != sig || st.Payload != tagRaw+"\n" || st.Message != "release one\n" {
		t.Errorf("signed tag: %+v", st)
	}
}
