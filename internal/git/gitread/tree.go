package gitread

import (
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"path"
	"strconv"
	"strings"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
)

// EntryType is the kind of a directory entry.
type EntryType string

// Entry types, named as the platform's contents API names them.
const (
	EntryFile      EntryType = "file"
	EntryDir       EntryType = "dir"
	EntrySymlink   EntryType = "symlink"
	EntrySubmodule EntryType = "submodule"
)

// Entry is one entry of a directory at a commit.
type Entry struct {
	Name string    // base name
	Path string    // full path from the repository root
	Type EntryType // file, dir, symlink or submodule
	SHA  string    // blob, tree or (for a submodule) commit SHA
	Size int64     // blob size in bytes for files and symlinks, 0 otherwise
}

// ReadFile returns the content of the file at path in the tree of revision
// rev. It fails with ErrRevisionNotFound for a bad revision, ErrPathNotFound
// when nothing is at path and ErrNotAFile when path is a directory or a
// submodule. A symlink is read as a file whose content is its target.
func (r *Repository) ReadFile(rev, filePath string) ([]byte, error) {
	tree, err := r.commitTree(rev)
	if err != nil {
		return nil, err
	}
	p, ok := cleanPath(filePath)
	if !ok || p == "" {
		return nil, fmt.Errorf("gitread: read %q at %s: %w", filePath, rev, ErrPathNotFound)
	}
	entry, err := r.findEntry(tree, p)
	if err != nil {
		return nil, fmt.Errorf("gitread: read %q at %s: %w", p, rev, err)
	}
	if !entry.Mode.IsFile() {
		return nil, fmt.Errorf("gitread: read %q at %s: %w", p, rev, ErrNotAFile)
	}
	return r.readBlob(entry.Hash)
}

// ReadBlob returns the content of the blob whose full SHA is sha (as given
// by Entry.SHA or Change.OldSHA/NewSHA). It fails with ErrPathNotFound when
// sha is malformed or names no blob in the repository.
func (r *Repository) ReadBlob(sha string) ([]byte, error) {
	if !isHex(sha) || len(sha) != 2*len(plumbing.ZeroHash) {
		return nil, fmt.Errorf("gitread: read blob %q: %w", sha, ErrPathNotFound)
	}
	return r.readBlob(plumbing.NewHash(sha))
}

func (r *Repository) readBlob(hash plumbing.Hash) ([]byte, error) {
	blob, err := r.repo.BlobObject(hash)
	if errors.Is(err, plumbing.ErrObjectNotFound) {
		return nil, fmt.Errorf("gitread: read blob %s: %w", hash, ErrPathNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("gitread: read blob %s: %w", hash, err)
	}
	rd, err := blob.Reader()
	if err != nil {
		return nil, fmt.Errorf("gitread: read blob %s: %w", hash, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("gitread: read blob %s: %w", hash, err)
	}
	return data, nil
}

// ListDir lists the directory at dirPath ("" or "/" for the root) in the tree
// of revision rev, in git's tree order. It fails with ErrRevisionNotFound for
// a bad revision, ErrPathNotFound when nothing is at dirPath and
// ErrNotADirectory when dirPath is not a directory.
func (r *Repository) ListDir(rev, dirPath string) ([]Entry, error) {
	c, err := r.resolveCommit(rev)
	if err != nil {
		return nil, err
	}
	p, ok := cleanPath(dirPath)
	if !ok {
		return nil, fmt.Errorf("gitread: list %q at %s: %w", dirPath, rev, ErrPathNotFound)
	}
	h := c.TreeHash
	if p != "" {
		root, err := c.Tree()
		if err != nil {
			return nil, fmt.Errorf("gitread: read tree of %s: %w", c.Hash, err)
		}
		entry, err := r.findEntry(root, p)
		if err != nil {
			return nil, fmt.Errorf("gitread: list %q at %s: %w", p, rev, err)
		}
		if entry.Mode != filemode.Dir {
			return nil, fmt.Errorf("gitread: list %q at %s: %w", p, rev, ErrNotADirectory)
		}
		h = entry.Hash
	}
	o, err := r.storage.EncodedObject(plumbing.TreeObject, h)
	if err != nil {
		return nil, fmt.Errorf("gitread: read tree %s: %w", h, err)
	}
	return r.treeEntries(o, p)
}

// ListTree lists the tree whose full SHA is sha as the directory at
// dirPath, in git's tree order: the entries ListDir returns for a
// revision at which dirPath is that tree (dirPath only prefixes their
// Path, cleaned as ListDir cleans it). A caller that has the directory's
// SHA (Stat's Entry.SHA) lists it without resolving the revision and
// walking the path again. It fails with ErrPathNotFound when sha is
// malformed, names no tree, or dirPath has a ".." segment.
func (r *Repository) ListTree(sha, dirPath string) ([]Entry, error) {
	p, ok := cleanPath(dirPath)
	if !ok || !isHex(sha) || len(sha) != 2*len(plumbing.ZeroHash) {
		return nil, fmt.Errorf("gitread: list tree %q as %q: %w", sha, dirPath, ErrPathNotFound)
	}
	o, err := r.storage.EncodedObject(plumbing.TreeObject, plumbing.NewHash(sha))
	if errors.Is(err, plumbing.ErrObjectNotFound) { // also: not a tree
		return nil, fmt.Errorf("gitread: list tree %s: %w", sha, ErrPathNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("gitread: read tree %s: %w", sha, err)
	}
	return r.treeEntries(o, p)
}

// treeEntries lists the tree object o as the directory at the clean path
// dir. It reads the raw object itself rather than through go-git's Tree,
// which makes strings of every entry's mode and name: the names and the
// paths and SHAs of all entries share three strings. Modes are read as
// go-git reads them (040000 a directory, 100xxx a file, 120000 a
// symlink, anything else a submodule), and a malformed tree is an error
// as there.
func (r *Repository) treeEntries(o plumbing.EncodedObject, dir string) ([]Entry, error) {
	rd, err := o.Reader()
	if err != nil {
		return nil, fmt.Errorf("gitread: read tree %s: %w", o.Hash(), err)
	}
	raw := make([]byte, o.Size())
	_, err = io.ReadFull(rd, raw)
	_ = rd.Close()
	if err != nil {
		return nil, fmt.Errorf("gitread: read tree %s: %w", o.Hash(), err)
	}
	type rawEntry struct {
		name string
		mode uint64
		hash plumbing.Hash
	}
	data := string(raw)
	list := make([]rawEntry, 0, len(data)/32+1) // "100644 name\0" and 20 bytes of id
	for data != "" {
		sp := strings.IndexByte(data, ' ')
		if sp < 0 {
			return nil, fmt.Errorf("gitread: read tree %s: %w: missing mode terminator", o.Hash(), object.ErrMalformedTree)
		}
		mode, err := strconv.ParseUint(data[:sp], 8, 32)
		if err != nil {
			return nil, fmt.Errorf("gitread: read tree %s: %w: malformed mode", o.Hash(), object.ErrMalformedTree)
		}
		data = data[sp+1:]
		nul := strings.IndexByte(data, 0)
		if nul <= 0 {
			return nil, fmt.Errorf("gitread: read tree %s: %w: missing or empty file name", o.Hash(), object.ErrMalformedTree)
		}
		e := rawEntry{name: data[:nul], mode: mode}
		data = data[nul+1:]
		if len(data) < len(e.hash) {
			return nil, fmt.Errorf("gitread: read tree %s: %w: truncated object id", o.Hash(), object.ErrMalformedTree)
		}
		copy(e.hash[:], data)
		data = data[len(e.hash):]
		list = append(list, e)
	}

	// The SHAs, and the paths below dir, each in one string.
	shas := make([]byte, 0, 2*len(plumbing.ZeroHash)*len(list))
	var paths []byte
	for _, e := range list {
		shas = hex.AppendEncode(shas, e.hash[:])
		if dir != "" {
			paths = append(append(append(paths, dir...), '/'), e.name...)
		}
	}
	shaText, pathText := string(shas), string(paths)
	entries := make([]Entry, 0, len(list))
	at := 0
	for i, e := range list {
		entry := Entry{Name: e.name, Path: e.name, SHA: shaText[2*len(plumbing.ZeroHash)*i:][:2*len(plumbing.ZeroHash)]}
		if dir != "" {
			n := len(dir) + 1 + len(e.name)
			entry.Path, at = pathText[at:at+n], at+n
		}
		if strings.IndexByte(e.name, '/') >= 0 || e.name == "." || e.name == ".." {
			entry.Path = path.Join(dir, e.name) // not in a valid tree: as path.Join cleans it
		}
		switch e.mode & 0o170000 {
		case 0o040000:
			entry.Type = EntryDir
		case 0o100000:
			entry.Type = EntryFile
		case 0o120000:
			entry.Type = EntrySymlink
		default:
			entry.Type = EntrySubmodule
		}
		if entry.Type == EntryFile || entry.Type == EntrySymlink {
			if entry.Size, err = r.blobSize(e.hash); err != nil {
				return nil, err
			}
		}
		entries = append(entries, entry)
	}
	return entries, nil
}

// toEntry converts a tree entry of directory dir.
func (r *Repository) toEntry(dir string, te object.TreeEntry) (Entry, error) {
	e := Entry{Name: te.Name, Path: path.Join(dir, te.Name), SHA: te.Hash.String()}
	switch te.Mode {
	case filemode.Dir:
		e.Type = EntryDir
		return e, nil
	case filemode.Submodule:
		e.Type = EntrySubmodule
		return e, nil
	case filemode.Symlink:
		e.Type = EntrySymlink
	default:
		e.Type = EntryFile
	}
	size, err := r.blobSize(te.Hash)
	if err != nil {
		return Entry{}, err
	}
	e.Size = size
	return e, nil
}

// BlobSize returns the size in bytes of the blob whose full SHA is sha
// without reading its content (remembered, see Sizes). It fails with
// ErrPathNotFound when sha is malformed.
func (r *Repository) BlobSize(sha string) (int64, error) {
	if !isHex(sha) || len(sha) != 2*len(plumbing.ZeroHash) {
		return 0, fmt.Errorf("gitread: size of blob %q: %w", sha, ErrPathNotFound)
	}
	return r.blobSize(plumbing.NewHash(sha))
}

// blobSize returns the size of the blob, remembered after the first
// lookup.
func (r *Repository) blobSize(h plumbing.Hash) (int64, error) {
	if size, ok := r.sizes.get(h); ok {
		return size, nil
	}
	size, err := r.storage.EncodedObjectSize(h)
	if err != nil {
		return 0, fmt.Errorf("gitread: size of blob %s: %w", h, err)
	}
	r.sizes.put(h, size)
	return size, nil
}

// maxRememberedSizes bounds the blob sizes a Sizes remembers.
const maxRememberedSizes = 100000

// commitTree resolves rev and returns the root tree of its commit.
func (r *Repository) commitTree(rev string) (*object.Tree, error) {
	c, err := r.resolveCommit(rev)
	if err != nil {
		return nil, err
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("gitread: read tree of %s: %w", c.Hash, err)
	}
	return tree, nil
}

// cleanPath normalises a repository path ("/a//b/" to "a/b") and rejects
// paths with ".." segments or NUL bytes.
func cleanPath(p string) (string, bool) {
	if strings.IndexByte(p, 0) >= 0 {
		return "", false
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", false
		}
	}
	return strings.Trim(path.Clean("/"+p), "/"), true
}

// findEntry walks the clean path p down from root one directory at a time,
// failing with ErrPathNotFound when a component is missing or is not a
// directory where one is needed.
func (r *Repository) findEntry(root *object.Tree, p string) (*object.TreeEntry, error) {
	parts := strings.Split(p, "/")
	tree := root
	for i, name := range parts {
		entry := findInTree(tree, name)
		if entry == nil {
			return nil, ErrPathNotFound
		}
		if i == len(parts)-1 {
			return entry, nil
		}
		if entry.Mode != filemode.Dir {
			return nil, ErrPathNotFound
		}
		next, err := r.repo.TreeObject(entry.Hash)
		if err != nil {
			return nil, fmt.Errorf("read tree %s: %w", entry.Hash, err)
		}
		tree = next
	}
	return nil, ErrPathNotFound
}

// findInTree returns the entry called name directly in tree, or nil.
func findInTree(tree *object.Tree, name string) *object.TreeEntry {
	for i := range tree.Entries {
		if tree.Entries[i].Name == name {
			return &tree.Entries[i]
		}
	}
	return nil
}
