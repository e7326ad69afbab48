package gitwrite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// The git database writes (blobs, trees, commits and annotated tags made
// one object at a time, as the platform's git data API makes them). Each
// writes the object git's own plumbing writes for the same input:
// hash-object, mktree, commit-tree, mktag.

// Tree entry modes a tree edit may give.
const (
	ModeFile    = modeFile
	ModeExec    = modeExec
	ModeDir     = modeDir
	ModeSymlink = modeSymlink
	ModeGitlink = modeGitlink
)

// WriteBlob writes data as a blob into the bare repository dir and
// returns its SHA: the object `git hash-object -w --stdin` writes.
func WriteBlob(dir string, data []byte) (string, error) {
	if err := checkRepo(dir); err != nil {
		return "", err
	}
	id, err := writeObject(dir, "blob", data)
	return id.String(), err
}

// TreeEdit is one entry of a tree write: the object SHA at Path with
// Mode, or, with Delete, no entry at Path.
type TreeEdit struct {
	Path   string // slash-separated, relative to the tree; may name a nested path
	Mode   uint32 // ModeFile, ModeExec, ModeDir, ModeSymlink or ModeGitlink
	SHA    string // a full object name; ignored with Delete
	Delete bool
}

// WriteTree writes the tree that is base (a tree SHA; "" for none) with
// the edits applied in order, and every tree it needs below it, into the
// bare repository dir, and returns the new tree's SHA.
//
// A nested path ("a/b/c") edits the trees along it, creating those that
// do not exist; an entry named by an edit replaces what was at its path
// (a file in the way of a nested path is replaced by a directory). A
// deletion of a path that is not there changes nothing. A tree left with
// no entry is dropped from its parent (the root stays, as the empty
// tree). Trees the edits do not reach keep their SHAs; the trees written
// are the ones `git mktree` writes for the same entries: sorted in git's
// order, modes as given.
//
// It refuses (*Refusal) a path git refuses (see CheckPath; ".git" in any
// spelling), a mode that is none of the five, and a base that is not a
// tree. It does not check that the objects the edits name exist: callers
// do, as they answer each one in their own words.
func WriteTree(ctx context.Context, dir, base string, edits []TreeEdit) (string, error) {
	if err := checkRepo(dir); err != nil {
		return "", err
	}
	for _, e := range edits {
		if err := checkEdit(e); err != nil {
			return "", err
		}
	}
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRU(cache.MiByte), filesystem.Options{KeepDescriptors: true})
	defer st.Close()
	tw := &treeWriter{r: &treeReader{st: st}, dir: dir}
	root := &treeNode{}
	if base != "" {
		if !plumbing.IsHash(base) {
			return "", refuse("base_tree %s is not a tree", base)
		}
		root.id = plumbing.NewHash(base)
		if err := tw.load(root); err != nil {
			return "", refuse("base_tree %s is not a tree", base)
		}
	} else {
		root.loaded = true
	}
	for _, e := range edits {
		if err := ctx.Err(); err != nil {
			return "", err
		}
		if err := tw.apply(root, e); err != nil {
			return "", err
		}
	}
	root.dirty = true
	id, _, err := tw.write(root)
	if err != nil {
		return "", err
	}
	return id.String(), nil
}

// checkEdit refuses an edit whose path or mode git would refuse.
func checkEdit(e TreeEdit) error {
	if err := CheckPath(e.Path); err != nil {
		return err
	}
	if e.Delete {
		return nil
	}
	switch e.Mode {
	case modeFile, modeExec, modeDir, modeSymlink, modeGitlink:
	default:
		return refuse("invalid mode %o for %s", e.Mode, e.Path)
	}
	if !verifyPath(e.Path, e.Mode) {
		return refuse("invalid path '%s'", e.Path)
	}
	if !plumbing.IsHash(e.SHA) {
		return refuse("%s is not a valid object name", e.SHA)
	}
	return nil
}

// treeNode is a tree being edited: its entries by name, read from id on
// first use; sub holds the trees below it that edits reach.
type treeNode struct {
	id      plumbing.Hash // the tree it was read from; zero for a new one
	loaded  bool
	entries map[string]entry
	sub     map[string]*treeNode
	dirty   bool
}

// treeWriter applies edits to trees of one repository.
type treeWriter struct {
	r   *treeReader
	dir string
}

// load reads n's entries.
func (tw *treeWriter) load(n *treeNode) error {
	if n.loaded {
		return nil
	}
	entries, err := tw.r.tree(n.id)
	if err != nil {
		return err
	}
	n.entries = make(map[string]entry, len(entries))
	for _, e := range entries {
		n.entries[e.name] = e
	}
	n.loaded = true
	return nil
}

// apply applies one edit below root.
func (tw *treeWriter) apply(root *treeNode, e TreeEdit) error {
	comps := strings.Split(e.Path, "/")
	n := root
	for _, name := range comps[:len(comps)-1] {
		if err := tw.load(n); err != nil {
			return err
		}
		next, ok := n.sub[name]
		if !ok {
			old, exists := n.entries[name]
			switch {
			case exists && isDirMode(old.mode):
				next = &treeNode{id: old.id}
			case e.Delete:
				return nil // nothing there to delete
			default:
				next = &treeNode{loaded: true}
			}
			if n.sub == nil {
				n.sub = map[string]*treeNode{}
			}
			n.sub[name] = next
			if n.entries == nil {
				n.entries = map[string]entry{}
			}
			n.entries[name] = entry{mode: modeDir, name: name}
		}
		n.dirty = true
		n = next
	}
	if err := tw.load(n); err != nil {
		return err
	}
	name := comps[len(comps)-1]
	delete(n.sub, name)
	n.dirty = true
	if e.Delete {
		delete(n.entries, name)
		return nil
	}
	if n.entries == nil {
		n.entries = map[string]entry{}
	}
	n.entries[name] = entry{mode: e.Mode, name: name, id: plumbing.NewHash(e.SHA)}
	return nil
}

// write writes n and the edited trees below it; it returns n's id, and
// false when n has no entry left.
func (tw *treeWriter) write(n *treeNode) (plumbing.Hash, bool, error) {
	if !n.dirty {
		return n.id, true, nil
	}
	out := make([]entry, 0, len(n.entries))
	for name, e := range n.entries {
		if sub, ok := n.sub[name]; ok {
			id, ok, err := tw.write(sub)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			if !ok {
				continue
			}
			e.id = id
		}
		out = append(out, e)
	}
	if len(out) == 0 {
		id, err := writeObject(tw.dir, "tree", nil)
		return id, false, err
	}
	slices.SortFunc(out, compareEntries)
	id, err := writeObject(tw.dir, "tree", encodeTree(out))
	return id, true, err
}

// NewCommit is a commit to write from its parts.
type NewCommit struct {
	Tree      string   // the tree's SHA
	Parents   []string // the parents' SHAs, in order
	Author    Identity
	Committer Identity
	Message   string
	// Signature is the commit's signature (an armored PGP or SSH
	// signature), written as its gpgsig header; "" for none.
	Signature string
	// Sign, when set and Signature is "", signs the commit.
	Sign Signer
}

// WriteCommit writes the commit into the bare repository dir and returns
// its SHA: the object `git commit-tree TREE -p PARENT... -F -` writes
// with the identities in GIT_AUTHOR_* and GIT_COMMITTER_* (names, emails
// and dates as Commit documents) and the message as is; a signature is
// the gpgsig header git writes when it signs, before the message.
//
// It refuses (*Refusal) what git refuses: an identity, a date, a NUL
// byte in the message or the signature. It does not check that the tree
// and the parents exist: callers do.
func WriteCommit(ctx context.Context, dir string, c NewCommit) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	if err := checkRepo(dir); err != nil {
		return "", err
	}
	if strings.IndexByte(c.Message, 0) >= 0 || strings.IndexByte(c.Signature, 0) >= 0 {
		return "", refuse("a NUL byte in commit log message not allowed")
	}
	if !plumbing.IsHash(c.Tree) {
		return "", refuse("%s is not a valid object name", c.Tree)
	}
	author, err := identLine(c.Author)
	if err != nil {
		return "", err
	}
	committer, err := identLine(c.Committer)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	buf.Grow(256 + len(c.Message) + len(c.Signature))
	fmt.Fprintf(&buf, "tree %s\n", plumbing.NewHash(c.Tree))
	for _, p := range c.Parents {
		if !plumbing.IsHash(p) {
			return "", refuse("%s is not a valid object name", p)
		}
		fmt.Fprintf(&buf, "parent %s\n", plumbing.NewHash(p))
	}
	fmt.Fprintf(&buf, "author %s\ncommitter %s\n\n", author, committer)
	buf.WriteString(c.Message)
	data, err := signCommit(buf.Bytes(), c.Signature, c.Sign)
	if err != nil {
		return "", err
	}
	id, err := writeObject(dir, "commit", data)
	return id.String(), err
}

// signCommit returns the bytes of the commit object payload (git's
// UTF-8 check applied) with the gpgsig header of signature, or else of
// sign's signature of those bytes, after its other headers; without
// either, as they are.
func signCommit(payload []byte, signature string, sign Signer) ([]byte, error) {
	if signature != "" {
		return verifyUTF8(withSignature(payload, signature)), nil
	}
	payload = verifyUTF8(payload)
	if sign == nil {
		return payload, nil
	}
	signature, err := sign.SignCommit(payload)
	if err != nil {
		return nil, err
	}
	return withSignature(payload, signature), nil
}

// withSignature inserts the gpgsig header of signature after the headers
// of the commit object payload.
func withSignature(payload []byte, signature string) []byte {
	sig := strings.TrimRight(signature, "\n")
	if sig == "" {
		return payload
	}
	end := bytes.Index(payload, []byte("\n\n")) + 1 // the headers' end: the committer line is always there
	out := make([]byte, 0, len(payload)+len(sig)+len(sig)/60+16)
	out = append(out, payload[:end]...)
	out = append(out, "gpgsig "...)
	out = append(out, strings.ReplaceAll(sig, "\n", "\n ")...)
	out = append(out, '\n')
	return append(out, payload[end:]...)
}

// NewTag is an annotated tag to write.
type NewTag struct {
	Object  string // the tagged object's SHA
	Type    string // its type: commit, tree, blob or tag
	Name    string // the tag's name ("v1.0")
	Tagger  Identity
	Message string
}

// WriteTag writes the annotated tag into the bare repository dir and
// returns its SHA: the object `git mktag` writes for "object", "type",
// "tag" and "tagger" headers and the message as is.
//
// It refuses (*Refusal) a type that is none of the four, a name that is
// empty or holds a newline, a tagger git refuses, and a NUL byte in the
// message. It does not check that the object exists or has the type:
// callers do.
func WriteTag(dir string, t NewTag) (string, error) {
	if err := checkRepo(dir); err != nil {
		return "", err
	}
	switch {
	case !plumbing.IsHash(t.Object):
		return "", refuse("%s is not a valid object name", t.Object)
	case t.Type != "commit" && t.Type != "tree" && t.Type != "blob" && t.Type != "tag":
		return "", refuse("invalid object type %q", t.Type)
	case t.Name == "" || strings.ContainsAny(t.Name, "\n\x00 "):
		return "", refuse("invalid tag name %q", t.Name)
	case strings.IndexByte(t.Message, 0) >= 0:
		return "", refuse("a NUL byte in the tag message not allowed")
	}
	tagger, err := identLine(t.Tagger)
	if err != nil {
		return "", err
	}
	var buf bytes.Buffer
	buf.Grow(200 + len(t.Message))
	fmt.Fprintf(&buf, "object %s\ntype %s\ntag %s\ntagger %s\n\n", plumbing.NewHash(t.Object), t.Type, t.Name, tagger)
	buf.WriteString(t.Message)
	id, err := writeObject(dir, "tag", buf.Bytes())
	return id.String(), err
}

// checkRepo fails when dir holds no repository.
func checkRepo(dir string) error {
	if info, err := os.Stat(filepath.Join(dir, "objects")); err != nil || !info.IsDir() {
		return fmt.Errorf("gitwrite: no repository at %s", dir)
	}
	return nil
}
