package gitread

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/format/diff"
	"github.com/go-git/go-git/v5/plumbing/object"
	gitdiff "github.com/go-git/go-git/v5/utils/diff"
	"github.com/sergi/go-diff/diffmatchpatch"
)

// LogQuery selects commits of the history of Head, newest first by
// committer date: with Path, those that changed it (or a path inside it)
// against their first parent; with Authors, those whose author email is
// one of them (compared without case); with Since and Until, those
// committed in that span. Skip and Limit page the result.
type LogQuery struct {
	Head         string
	Path         string
	Authors      []string
	Since, Until time.Time
	Skip, Limit  int
}

// Log returns the commits q selects, without their changed paths, and
// whether more follow the page. It fails with ErrRevisionNotFound when
// Head does not resolve.
func (r *Repository) Log(ctx context.Context, q LogQuery) ([]Commit, bool, error) {
	head, err := r.resolveCommit(q.Head)
	if err != nil {
		return nil, false, err
	}
	hashes, err := r.rangeHashes(ctx, head, nil)
	if err != nil {
		return nil, false, err
	}
	var out []Commit
	skip := q.Skip
	for _, h := range hashes {
		c, err := r.repo.CommitObject(h)
		if err != nil {
			return nil, false, fmt.Errorf("gitread: read commit %s: %w", h, err)
		}
		ok, err := r.selects(ctx, q, c)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		if skip > 0 {
			skip--
			continue
		}
		if len(out) == q.Limit {
			return out, true, nil
		}
		out = append(out, metaOf(c))
	}
	return out, false, nil
}

// selects reports whether c passes q's filters.
func (r *Repository) selects(ctx context.Context, q LogQuery, c *object.Commit) (bool, error) {
	when := c.Committer.When
	if !q.Since.IsZero() && when.Before(q.Since) || !q.Until.IsZero() && when.After(q.Until) {
		return false, nil
	}
	if len(q.Authors) > 0 && !containsFold(q.Authors, c.Author.Email) {
		return false, nil
	}
	if q.Path == "" {
		return true, nil
	}
	changes, err := r.changesOf(ctx, c, []string{strings.Trim(q.Path, "/")})
	return len(changes) > 0, err
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// metaOf describes a commit without its changed paths.
func metaOf(c *object.Commit) Commit {
	out := Commit{SHA: c.Hash.String(), TreeSHA: c.TreeHash.String(), AuthorName: c.Author.Name,
		AuthorEmail: c.Author.Email, AuthorDate: c.Author.When, CommitterName: c.Committer.Name,
		CommitterEmail: c.Committer.Email, CommitterDate: c.Committer.When, Message: c.Message}
	for _, p := range c.ParentHashes {
		out.ParentSHAs = append(out.ParentSHAs, p.String())
	}
	if c.PGPSignature != "" {
		out.Signature, out.Payload = c.PGPSignature, payloadOf(c)
	}
	return out
}

// signed is a commit or a tag that git signs: its bytes without the
// signature are what the signature signs.
type signed interface {
	EncodeWithoutSignature(o plumbing.EncodedObject) error
}

// payloadOf is the object's bytes without its signature ("" when they
// cannot be read).
func payloadOf(s signed) string {
	o := &plumbing.MemoryObject{}
	if err := s.EncodeWithoutSignature(o); err != nil {
		return ""
	}
	rd, err := o.Reader()
	if err != nil {
		return ""
	}
	defer rd.Close()
	data, err := io.ReadAll(rd)
	if err != nil {
		return ""
	}
	return string(data)
}

// changesOf lists the paths c changed against its first parent (against
// the empty tree for a root commit).
func (r *Repository) changesOf(ctx context.Context, c *object.Commit, pathspecs []string) ([]Change, error) {
	var parentTree *object.Tree
	if len(c.ParentHashes) > 0 {
		parent, err := r.repo.CommitObject(c.ParentHashes[0])
		if err != nil {
			return nil, fmt.Errorf("gitread: read commit %s: %w", c.ParentHashes[0], err)
		}
		if parentTree, err = parent.Tree(); err != nil {
			return nil, fmt.Errorf("gitread: read tree of %s: %w", parent.Hash, err)
		}
	}
	tree, err := c.Tree()
	if err != nil {
		return nil, fmt.Errorf("gitread: read tree of %s: %w", c.Hash, err)
	}
	return r.diffTrees(ctx, parentTree, tree, pathspecs)
}

// FileDiff is one file's change between two commits: its status, the
// lines it added and deleted, and its unified diff (empty for binary
// files).
type FileDiff struct {
	Change
	PreviousPath string // for a rename; forgeapi reports none
	Additions    int
	Deletions    int
	Binary       bool
	Patch        string
}

// Diff returns the changes of the files between revisions base and head
// (base "" for the empty tree), sorted by path, at most limit of them,
// and how many files changed in all.
func (r *Repository) Diff(ctx context.Context, base, head string, limit int) ([]FileDiff, int, error) {
	headCommit, err := r.resolveCommit(head)
	if err != nil {
		return nil, 0, err
	}
	var from *object.Tree
	if base != "" {
		baseCommit, err := r.resolveCommit(base)
		if err != nil {
			return nil, 0, err
		}
		if from, err = baseCommit.Tree(); err != nil {
			return nil, 0, fmt.Errorf("gitread: read tree of %s: %w", base, err)
		}
	}
	to, err := headCommit.Tree()
	if err != nil {
		return nil, 0, fmt.Errorf("gitread: read tree of %s: %w", head, err)
	}
	d, err := r.diffTreeEntries(ctx, from, to, nil)
	if err != nil {
		return nil, 0, err
	}
	changes := d.out
	total := len(changes)
	if len(changes) > limit {
		changes = changes[:limit]
	}
	out := make([]FileDiff, 0, len(changes))
	for _, c := range changes {
		fp, err := r.filePatch(ctx, c, d.modes[c.Path])
		if err != nil {
			return nil, 0, err
		}
		if fp == nil { // a submodule: no content
			out = append(out, FileDiff{Change: c})
			continue
		}
		fd := FileDiff{Change: c, Binary: fp.IsBinary()}
		fd.Additions, fd.Deletions = countLines(fp)
		if !fd.Binary {
			if fd.Patch, err = unifiedHunks(fp); err != nil {
				return nil, 0, err
			}
		}
		out = append(out, fd)
	}
	return out, total, nil
}

// filePatch is the patch of one changed path, made from the blobs its
// change names, as go-git's tree patch makes it (Tree.PatchContext, which
// also refuses to read the files of a tree that holds a path it would not
// check out: "..", ".git", control characters, backslashes; the server
// shows such trees, it does not check them out). Only files and symbolic
// links have content; a side that is neither is absent, and nil is the
// patch of a change without content on either side. modes are the
// modes of the change's entries before and after. A side whose start
// holds a NUL byte is binary: no chunks.
func (r *Repository) filePatch(ctx context.Context, c Change, modes [2]filemode.FileMode) (diff.FilePatch, error) {
	if !modes[0].IsFile() && !modes[1].IsFile() {
		return nil, nil
	}
	fp := &changePatch{}
	var texts [2]string
	for i, side := range []struct {
		sha  string
		mode filemode.FileMode
		file *diff.File
	}{{c.OldSHA, modes[0], &fp.from}, {c.NewSHA, modes[1], &fp.to}} {
		if side.sha == "" || !side.mode.IsFile() {
			continue
		}
		*side.file = patchFile{hash: plumbing.NewHash(side.sha), mode: side.mode, path: c.Path}
		data, err := r.readBlob(plumbing.NewHash(side.sha))
		if err != nil {
			return nil, err
		}
		if bytes.IndexByte(data[:min(len(data), binarySniffLen)], 0) >= 0 {
			return fp, nil
		}
		texts[i] = string(data)
	}
	for _, d := range gitdiff.Do(texts[0], texts[1]) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		op := diff.Equal
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			op = diff.Delete
		case diffmatchpatch.DiffInsert:
			op = diff.Add
		}
		fp.chunks = append(fp.chunks, patchChunk{content: d.Text, op: op})
	}
	return fp, nil
}

// binarySniffLen is how much of a file go-git looks at for a NUL byte to
// call it binary.
const binarySniffLen = 8000

// changePatch is a diff.FilePatch; without chunks it is binary (go-git's
// rule: two empty files have none either).
type changePatch struct {
	from, to diff.File
	chunks   []diff.Chunk
}

func (p *changePatch) IsBinary() bool              { return len(p.chunks) == 0 }
func (p *changePatch) Files() (from, to diff.File) { return p.from, p.to }
func (p *changePatch) Chunks() []diff.Chunk        { return p.chunks }

// patchFile is a diff.File: one side of a changePatch.
type patchFile struct {
	hash plumbing.Hash
	mode filemode.FileMode
	path string
}

func (f patchFile) Hash() plumbing.Hash     { return f.hash }
func (f patchFile) Mode() filemode.FileMode { return f.mode }
func (f patchFile) Path() string            { return f.path }

// patchChunk is a diff.Chunk.
type patchChunk struct {
	content string
	op      diff.Operation
}

func (c patchChunk) Content() string      { return c.content }
func (c patchChunk) Type() diff.Operation { return c.op }

// countLines counts the added and deleted lines of a file patch.
func countLines(fp diff.FilePatch) (added, deleted int) {
	for _, ch := range fp.Chunks() {
		n := strings.Count(ch.Content(), "\n")
		if !strings.HasSuffix(ch.Content(), "\n") && ch.Content() != "" {
			n++
		}
		switch ch.Type() {
		case diff.Add:
			added += n
		case diff.Delete:
			deleted += n
		}
	}
	return added, deleted
}

// onePatch is a diff.Patch of one file, to encode it alone.
type onePatch struct{ fp diff.FilePatch }

func (p onePatch) FilePatches() []diff.FilePatch { return []diff.FilePatch{p.fp} }
func (p onePatch) Message() string               { return "" }

// unifiedHunks renders a file patch's hunks (from the first "@@"), as the
// platform's patch field has them: no "diff --git" and file header lines.
func unifiedHunks(fp diff.FilePatch) (string, error) {
	var buf bytes.Buffer
	if err := diff.NewUnifiedEncoder(&buf, diff.DefaultContextLines).Encode(onePatch{fp}); err != nil {
		return "", fmt.Errorf("gitread: encode patch: %w", err)
	}
	s := buf.String()
	if i := strings.Index(s, "\n@@"); i >= 0 {
		return strings.TrimSuffix(s[i+1:], "\n"), nil
	}
	return "", nil
}

// SplitBasehead splits the basehead of a comparison, "BASE...HEAD", into
// its revisions; ok is false when either is missing.
func SplitBasehead(basehead string) (base, head string, ok bool) {
	base, head, found := strings.Cut(basehead, "...")
	return base, head, found && base != "" && head != ""
}
