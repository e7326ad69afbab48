package gitread

import (
	"bufio"
	"bytes"
	"fmt"
	"path"
	"strings"
)

// Stat returns the entry at p ("" for the root directory) in the tree of
// revision rev, and the commit rev resolves to. It fails with
// ErrRevisionNotFound for a bad revision and ErrPathNotFound when nothing
// is at p.
func (r *Repository) Stat(rev, p string) (Entry, string, error) {
	c, err := r.resolveCommit(rev)
	if err != nil {
		return Entry{}, "", err
	}
	clean, ok := cleanPath(p)
	if !ok {
		return Entry{}, "", fmt.Errorf("gitread: stat %q at %s: %w", p, rev, ErrPathNotFound)
	}
	if clean == "" {
		return Entry{Type: EntryDir, SHA: c.TreeHash.String()}, c.Hash.String(), nil
	}
	tree, err := c.Tree()
	if err != nil {
		return Entry{}, "", fmt.Errorf("gitread: read tree of %s: %w", c.Hash, err)
	}
	te, err := r.findEntry(tree, clean)
	if err != nil {
		return Entry{}, "", fmt.Errorf("gitread: stat %q at %s: %w", clean, rev, err)
	}
	e, err := r.toEntry(path.Dir(clean), *te)
	return e, c.Hash.String(), err
}

// Ref is a branch or a tag: its short name and the commit it leads to.
type Ref struct {
	Name string
	SHA  string
}

// Branches returns the repository's branches sorted by name; none for an
// empty repository.
func (r *Repository) Branches() ([]Ref, error) {
	refs, err := r.listRefs("refs/heads/")
	if err != nil {
		return nil, err
	}
	out := make([]Ref, len(refs))
	for i, ref := range refs {
		out[i] = Ref{Name: strings.TrimPrefix(ref.name, "refs/heads/"), SHA: ref.hash.String()}
	}
	return out, nil
}

// CommitMeta describes the commit rev resolves to, without the paths it
// changed (Added, Removed and Modified stay nil).
func (r *Repository) CommitMeta(rev string) (Commit, error) {
	c, err := r.resolveCommit(rev)
	if err != nil {
		return Commit{}, err
	}
	return metaOf(c), nil
}

// SubmoduleURL returns the URL that .gitmodules at revision rev gives the
// submodule at p, or "" when it names none.
func (r *Repository) SubmoduleURL(rev, p string) (string, error) {
	data, err := r.ReadFile(rev, ".gitmodules")
	if err != nil {
		return "", nil // no .gitmodules: a submodule without a URL
	}
	var subPath, url string
	flush := func() bool { return subPath == p && url != "" }
	sc := bufio.NewScanner(bytes.NewReader(data))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "[") {
			if flush() {
				return url, nil
			}
			subPath, url = "", ""
			continue
		}
		key, value, ok := strings.Cut(line, "=")
		if !ok {
			continue
		}
		switch strings.TrimSpace(key) {
		case "path":
			subPath = strings.TrimSpace(value)
		case "url":
			url = strings.TrimSpace(value)
		}
	}
	if flush() {
		return url, nil
	}
	return "", nil
}
