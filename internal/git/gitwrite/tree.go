package gitwrite

import (
	"bytes"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"sync"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// The new trees are the ones git's `read-tree PARENT`, `update-index`
// and `write-tree` write: read-tree primes the index's cache of trees
// from the parent's, so write-tree rewrites only the trees along the
// changed path and keeps every other subtree as it is. A rewritten tree
// lists what the index holds at its level: entries sorted in git's order,
// file modes canonical (100644 or 100755 by the owner's execute bit,
// 120000, 160000) and no subtree that holds no file at any depth (an index
// has no entry for an empty directory).

// entry is a tree entry, its mode canonical as git's tree walk reads it.
type entry struct {
	mode uint32
	name string
	id   plumbing.Hash
}

// canonMode is the mode git's tree walk gives a raw tree entry mode.
func canonMode(m uint32) uint32 {
	switch m & modeTypes {
	case 0o100000:
		if m&0o100 != 0 {
			return modeExec
		}
		return modeFile
	case modeSymlink:
		return modeSymlink
	case modeDir:
		return modeDir
	}
	return modeGitlink
}

// parseTree reads a tree object's entries, refusing what git's tree
// walk refuses.
func parseTree(id plumbing.Hash, data []byte) ([]entry, error) {
	var out []entry
	for len(data) > 0 {
		if len(data) < 23 || data[len(data)-21] != 0 {
			return nil, fmt.Errorf("gitwrite: tree %s: too-short tree object", id)
		}
		sp := bytes.IndexByte(data, ' ')
		if sp <= 0 {
			return nil, fmt.Errorf("gitwrite: tree %s: malformed mode in tree entry", id)
		}
		var mode uint32
		for _, c := range data[:sp] {
			if c < '0' || c > '7' {
				return nil, fmt.Errorf("gitwrite: tree %s: malformed mode in tree entry", id)
			}
			mode = mode<<3 + uint32(c-'0')
		}
		data = data[sp+1:]
		nul := bytes.IndexByte(data, 0)
		if nul == 0 {
			return nil, fmt.Errorf("gitwrite: tree %s: empty filename in tree entry", id)
		}
		if nul < 0 || len(data) < nul+21 {
			return nil, fmt.Errorf("gitwrite: tree %s: too-short tree object", id)
		}
		e := entry{mode: canonMode(mode), name: string(data[:nul])}
		copy(e.id[:], data[nul+1:nul+21])
		out = append(out, e)
		data = data[nul+21:]
	}
	return out, nil
}

// encodeTree is a tree object's content: entries in git's order.
func encodeTree(entries []entry) []byte {
	var b bytes.Buffer
	b.Grow(len(entries) * 40)
	for _, e := range entries {
		b.WriteString(strconv.FormatUint(uint64(e.mode), 8))
		b.WriteByte(' ')
		b.WriteString(e.name)
		b.WriteByte(0)
		b.Write(e.id[:])
	}
	return b.Bytes()
}

// compareEntries is git's tree order: names compared bytewise, a
// directory's as if it ended in '/'.
func compareEntries(a, b entry) int {
	n := min(len(a.name), len(b.name))
	if c := strings.Compare(a.name[:n], b.name[:n]); c != 0 {
		return c
	}
	next := func(e entry) int {
		if len(e.name) > n {
			return int(e.name[n])
		}
		if isDirMode(e.mode) {
			return '/'
		}
		return 0
	}
	return next(a) - next(b)
}

// summary is what a tree holds for an index read from it.
type summary struct {
	files bool // an entry that is not a tree (file, link, submodule), at any depth
	links bool // a symbolic link, at any depth
	other bool // an entry that is neither a tree nor a link, at any depth
	valid bool // every path below, relative to the tree, passes verifyPath
}

// summaries remembers the summary of trees by id (trees never change),
// across repositories: a tree's summary depends on its content alone.
// Bounded: it starts over when full.
var summaries = struct {
	sync.Mutex
	m map[plumbing.Hash]summary
}{m: map[plumbing.Hash]summary{}}

const maxSummaries = 1 << 16

func cachedSummary(id plumbing.Hash) (summary, bool) {
	summaries.Lock()
	defer summaries.Unlock()
	s, ok := summaries.m[id]
	return s, ok
}

func rememberSummary(id plumbing.Hash, s summary) {
	summaries.Lock()
	defer summaries.Unlock()
	if len(summaries.m) >= maxSummaries {
		clear(summaries.m)
	}
	summaries.m[id] = s
}

// treeReader reads a repository's objects with go-git.
type treeReader struct {
	st *filesystem.Storage
}

// object reads an object of type kind.
func (r *treeReader) object(kind plumbing.ObjectType, id plumbing.Hash) ([]byte, error) {
	o, err := r.st.EncodedObject(plumbing.AnyObject, id)
	if err != nil {
		return nil, fmt.Errorf("gitwrite: read %s %s: %w", kind, id, err)
	}
	if o.Type() != kind {
		return nil, fmt.Errorf("gitwrite: %s is a %s, not a %s", id, o.Type(), kind)
	}
	rd, err := o.Reader()
	if err != nil {
		return nil, fmt.Errorf("gitwrite: read %s %s: %w", kind, id, err)
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return nil, fmt.Errorf("gitwrite: read %s %s: %w", kind, id, err)
	}
	return data, nil
}

// tree reads a tree's entries.
func (r *treeReader) tree(id plumbing.Hash) ([]entry, error) {
	data, err := r.object(plumbing.TreeObject, id)
	if err != nil {
		return nil, err
	}
	return parseTree(id, data)
}

// summary returns the summary of the tree id, reading the trees below it
// that are not remembered.
func (r *treeReader) summary(id plumbing.Hash) (summary, error) {
	if s, ok := cachedSummary(id); ok {
		return s, nil
	}
	entries, err := r.tree(id)
	if err != nil {
		return summary{}, err
	}
	s, err := r.summaryOf(entries)
	if err != nil {
		return summary{}, err
	}
	rememberSummary(id, s)
	return s, nil
}

// summaryOf is the summary of a tree with these entries.
func (r *treeReader) summaryOf(entries []entry) (summary, error) {
	s := summary{valid: true}
	for _, e := range entries {
		if !isDirMode(e.mode) {
			s.files = true
			if isLinkMode(e.mode) {
				s.links = true
			} else {
				s.other = true
			}
			s.valid = s.valid && verifyPath(e.name, e.mode)
			continue
		}
		sub, err := r.summary(e.id)
		if err != nil {
			return summary{}, err
		}
		if !sub.files {
			continue // no index entry comes of it
		}
		s.files = true
		s.links = s.links || sub.links
		s.other = s.other || sub.other
		// The checks of a directory's name depend on the mode of the
		// entry below it only for links; "/x" is a component every check
		// passes.
		s.valid = s.valid && sub.valid &&
			(!sub.other || verifyPath(e.name+"/x", modeFile)) &&
			(!sub.links || verifyPath(e.name+"/x", modeSymlink))
	}
	return s, nil
}

// errConflict is a path that would be both a file and a directory.
// conflictReason is git's word for a path that would be both a file
// and a directory.
const conflictReason = "appears as both a file and as a directory"

// edit is the change of one path applied to trees.
type edit struct {
	r      *treeReader
	dir    string
	path   string
	blob   plumbing.Hash // the new file's blob; zero for a deletion
	delete bool
}

// apply returns the tree that replaces the tree of entries (nil for a
// tree that does not exist) with the change at comps applied below it,
// written, and false when it holds no file (its parent drops it).
func (ed *edit) apply(entries []entry, comps []string) (plumbing.Hash, bool, error) {
	name := comps[0]
	out := make([]entry, 0, len(entries)+1)
	var found *entry
	for i, e := range entries {
		if e.name == name {
			found = &entries[i]
			continue
		}
		if isDirMode(e.mode) {
			s, err := ed.r.summary(e.id)
			if err != nil {
				return plumbing.ZeroHash, false, err
			}
			if !s.files {
				continue
			}
		}
		out = append(out, e)
	}
	var foundFiles bool
	if found != nil && isDirMode(found.mode) {
		s, err := ed.r.summary(found.id)
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		foundFiles = s.files
	}
	switch {
	case len(comps) == 1 && ed.delete:
		if foundFiles {
			return plumbing.ZeroHash, false, refuse("%s is a directory, not a file", ed.path)
		}
	case len(comps) == 1:
		if foundFiles {
			return plumbing.ZeroHash, false, refuse("'%s' %s", ed.path, conflictReason)
		}
		mode := uint32(modeFile)
		if found != nil && found.mode == modeExec {
			mode = modeExec // an executable stays one, as on the platform
		}
		out = append(out, entry{mode: mode, name: name, id: ed.blob})
	case found != nil && !isDirMode(found.mode):
		if !ed.delete {
			return plumbing.ZeroHash, false, refuse("'%s' %s", ed.path, conflictReason)
		}
		out = append(out, *found) // nothing to remove below a file
	case found != nil || !ed.delete:
		var below []entry
		if found != nil {
			var err error
			if below, err = ed.r.tree(found.id); err != nil {
				return plumbing.ZeroHash, false, err
			}
		}
		id, ok, err := ed.apply(below, comps[1:])
		if err != nil {
			return plumbing.ZeroHash, false, err
		}
		if ok {
			out = append(out, entry{mode: modeDir, name: name, id: id})
		}
	}
	if len(out) == 0 {
		return plumbing.ZeroHash, false, nil
	}
	slices.SortStableFunc(out, compareEntries)
	id, err := writeObject(ed.dir, "tree", encodeTree(out))
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	s, err := ed.r.summaryOf(out)
	if err != nil {
		return plumbing.ZeroHash, false, err
	}
	rememberSummary(id, s)
	return id, true, nil
}
