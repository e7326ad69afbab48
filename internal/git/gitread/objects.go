package gitread

import (
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// RefInfo is a reference under refs/: its full name, the object it
// points at and that object's type (commit, tag, tree or blob).
type RefInfo struct {
	Name string
	SHA  string
	Type string
}

// Refs returns the references whose full name starts with prefix
// ("refs/heads/", "refs/tags/v1", ...), sorted by name.
func (r *Repository) Refs(prefix string) ([]RefInfo, error) {
	refs, err := r.listRefs(prefix)
	if err != nil {
		return nil, err
	}
	out := make([]RefInfo, 0, len(refs))
	for _, ref := range refs {
		typ, err := r.objectType(ref.hash)
		if err != nil {
			return nil, fmt.Errorf("gitread: list references: %w", err)
		}
		out = append(out, RefInfo{Name: ref.name, SHA: ref.hash.String(), Type: typ})
	}
	return out, nil
}

// objectType names the type of the object with the hash.
func (r *Repository) objectType(h plumbing.Hash) (string, error) {
	o, err := r.storage.EncodedObject(plumbing.AnyObject, h)
	if err != nil {
		return "", fmt.Errorf("gitread: read object %s: %w", h, err)
	}
	return o.Type().String(), nil
}

// Tag is a tag with the commit it leads to.
type Tag struct {
	Name      string
	CommitSHA string
}

// Tags returns the tags that lead to a commit (annotated ones peeled),
// by name descending.
func (r *Repository) Tags() ([]Tag, error) {
	refs, err := r.Refs("refs/tags/")
	if err != nil {
		return nil, err
	}
	var out []Tag
	for _, ref := range refs {
		c, err := r.peelToCommit(ref.Name, plumbing.NewHash(ref.SHA))
		if err != nil {
			continue // a tag of a tree or blob names no commit
		}
		out = append(out, Tag{Name: strings.TrimPrefix(ref.Name, "refs/tags/"), CommitSHA: c.Hash.String()})
	}
	slices.SortFunc(out, func(a, b Tag) int { return strings.Compare(b.Name, a.Name) })
	return out, nil
}

// TreeEntry is an entry of a tree as the git database API shows it.
type TreeEntry struct {
	Path string // relative to the tree
	Mode string // 100644, 100755, 040000, 120000, 160000
	Type string // blob, tree or commit
	SHA  string
	Size int64 // blobs only
}

// Tree returns the entries of the tree with the SHA (or of a commit's
// tree), recursively when recursive is true, at most limit of them; the
// bool reports whether the list was truncated. An unknown SHA is
// ErrPathNotFound.
func (r *Repository) Tree(sha string, recursive bool, limit int) (string, []TreeEntry, bool, error) {
	h := plumbing.NewHash(sha)
	if !isHex(sha) || len(sha) != 40 {
		return "", nil, false, ErrPathNotFound
	}
	tree, err := r.repo.TreeObject(h)
	if err != nil {
		c, cerr := r.repo.CommitObject(h)
		if cerr != nil {
			return "", nil, false, fmt.Errorf("gitread: tree %s: %w", sha, ErrPathNotFound)
		}
		if tree, err = c.Tree(); err != nil {
			return "", nil, false, fmt.Errorf("gitread: tree of %s: %w", sha, err)
		}
	}
	var out []TreeEntry
	var walk func(dir string, t *object.Tree) (bool, error)
	walk = func(dir string, t *object.Tree) (bool, error) {
		for _, e := range t.Entries {
			if len(out) == limit {
				return true, nil
			}
			te := TreeEntry{Path: path.Join(dir, e.Name), Mode: fmt.Sprintf("%06o", uint32(e.Mode)), SHA: e.Hash.String()}
			switch e.Mode {
			case filemode.Dir:
				te.Type = "tree"
			case filemode.Submodule:
				te.Type = "commit"
			default:
				te.Type = "blob"
				if te.Size, err = r.blobSize(e.Hash); err != nil {
					return false, err
				}
			}
			out = append(out, te)
			if recursive && e.Mode == filemode.Dir {
				sub, err := r.repo.TreeObject(e.Hash)
				if err != nil {
					return false, fmt.Errorf("gitread: read tree %s: %w", e.Hash, err)
				}
				if truncated, err := walk(te.Path, sub); truncated || err != nil {
					return truncated, err
				}
			}
		}
		return false, nil
	}
	truncated, err := walk("", tree)
	return tree.Hash.String(), out, truncated, err
}

// CommitObject describes the commit with the full SHA, for the git
// database API: ErrRevisionNotFound when it is not a commit.
func (r *Repository) CommitObject(sha string) (Commit, error) {
	if !isHex(sha) || len(sha) != 40 {
		return Commit{}, ErrRevisionNotFound
	}
	c, err := r.repo.CommitObject(plumbing.NewHash(sha))
	if err != nil {
		return Commit{}, fmt.Errorf("gitread: commit %s: %w", sha, ErrRevisionNotFound)
	}
	return metaOf(c), nil
}

// ObjectType names the type (commit, tree, blob or tag) of the object
// whose full SHA is sha. It fails with ErrPathNotFound when sha is
// malformed or names no object in the repository.
func (r *Repository) ObjectType(sha string) (string, error) {
	if !isHex(sha) || len(sha) != 2*len(plumbing.ZeroHash) {
		return "", fmt.Errorf("gitread: object %q: %w", sha, ErrPathNotFound)
	}
	o, err := r.storage.EncodedObject(plumbing.AnyObject, plumbing.NewHash(sha))
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return "", fmt.Errorf("gitread: object %s: %w", sha, ErrPathNotFound)
	} else if err != nil {
		return "", fmt.Errorf("gitread: read object %s: %w", sha, err)
	}
	return o.Type().String(), nil
}

// TagObject is an annotated tag object.
type TagObject struct {
	SHA         string
	Name        string
	ObjectSHA   string
	ObjectType  string // commit, tree, blob or tag
	TaggerName  string
	TaggerEmail string
	TaggerDate  time.Time
	Message     string
	// Signature is the tag's signature, "" when it has none; Payload is
	// then the tag without it, the bytes the signature signs.
	Signature string
	Payload   string
}

// AnnotatedTag reads the annotated tag object with the full SHA. It fails
// with ErrPathNotFound when sha is malformed or names no tag object.
func (r *Repository) AnnotatedTag(sha string) (TagObject, error) {
	if !isHex(sha) || len(sha) != 2*len(plumbing.ZeroHash) {
		return TagObject{}, fmt.Errorf("gitread: tag %q: %w", sha, ErrPathNotFound)
	}
	t, err := r.repo.TagObject(plumbing.NewHash(sha))
	if err != nil {
		return TagObject{}, fmt.Errorf("gitread: tag %s: %w", sha, ErrPathNotFound)
	}
	out := TagObject{SHA: t.Hash.String(), Name: t.Name, ObjectSHA: t.Target.String(), ObjectType: t.TargetType.String(),
		TaggerName: t.Tagger.Name, TaggerEmail: t.Tagger.Email, TaggerDate: t.Tagger.When, Message: t.Message}
	if t.PGPSignature != "" {
		out.Signature, out.Payload = t.PGPSignature, payloadOf(t)
	}
	return out, nil
}

// TreeSHA returns the SHA of the tree that rev names: a tree's or a
// commit's full SHA, or a branch, tag or full reference name (names with
// "/" too), annotated tags peeled to their commit. It fails with
// ErrPathNotFound when rev names no tree.
func (r *Repository) TreeSHA(rev string) (string, error) {
	if isHex(rev) && len(rev) == 2*len(plumbing.ZeroHash) {
		if typ, err := r.ObjectType(rev); err == nil && typ == "tree" {
			return rev, nil
		}
	}
	c, err := r.resolveCommit(rev)
	if err != nil {
		return "", fmt.Errorf("gitread: tree %q: %w", rev, ErrPathNotFound)
	}
	return c.TreeHash.String(), nil
}
