package githttp

import (
	"bytes"
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"forgeapi/internal/git/gitcmd"
)

// Inspector reads the objects of a push that is not yet accepted. During
// pre-receive the new objects live in git's quarantine directory; the
// Inspector reads through it, so it is valid only during the PreReceive call
// it was passed to.
type Inspector interface {
	// NewCommits lists, newest first, the commits that u brings into the
	// repository: those reachable from u.NewSHA and from no existing
	// reference (`git rev-list NEW --not --all`). It is empty for a
	// deletion and for an update to an already-known commit.
	NewCommits(ctx context.Context, u RefUpdate) ([]string, error)
	// ChangedPaths lists, sorted and without duplicates, the paths changed
	// by the commits of NewCommits, each against its first parent (a root
	// commit against the empty tree), renames as deletion plus addition.
	ChangedPaths(ctx context.Context, u RefUpdate) ([]string, error)
	// TreeChanges lists, sorted, the paths whose entries differ between
	// the trees of u.OldSHA and u.NewSHA (`git diff-tree -r --no-renames
	// OLD NEW`): what the update changes in the reference's files as a
	// whole, whether or not it brings new commits (a force push back to
	// an older commit changes files without any). It is empty for a
	// creation or a deletion.
	TreeChanges(ctx context.Context, u RefUpdate) ([]string, error)
	// IsAncestor reports whether the commit ancestor is reachable from
	// the commit descendant (`git merge-base --is-ancestor`): an update
	// from ancestor to descendant is a fast-forward.
	IsAncestor(ctx context.Context, ancestor, descendant string) (bool, error)
	// MergeCommits lists the commits of NewCommits that have more than
	// one parent.
	MergeCommits(ctx context.Context, u RefUpdate) ([]string, error)
	// NewBlobs lists the file contents (blobs) that u brings into the
	// repository, each with a path it has in the new commits and its size
	// in bytes (`git rev-list --objects NEW --not --all`). It is empty
	// for a deletion.
	NewBlobs(ctx context.Context, u RefUpdate) ([]Blob, error)
	// NewCommitSignatures lists the commits of NewCommits with their
	// signatures (the gpgsig header, "" for none), the bytes a signature
	// signs (the commit without that header) and their committers'
	// email addresses, from one `git cat-file --batch`.
	NewCommitSignatures(ctx context.Context, u RefUpdate) ([]CommitSignature, error)
}

// CommitSignature is a commit's signature as NewCommitSignatures reads
// it.
type CommitSignature struct {
	SHA, Signature, Payload, CommitterEmail string
}

// Blob is a file content a push brings: one path it is found at, and its
// size in bytes.
type Blob struct {
	Path string
	Size int64
}

// quarantineInspector implements Inspector with the git binary, run with
// the quarantine environment that git gave the hook.
type quarantineInspector struct {
	git gitcmd.Git
}

func newQuarantineInspector(gitPath, repoDir string, hookEnv map[string]string) *quarantineInspector {
	g := gitcmd.Git{Dir: repoDir, Binary: gitPath}
	for _, key := range []string{"GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_QUARANTINE_PATH"} {
		if v := hookEnv[key]; v != "" {
			g.Env = append(g.Env, key+"="+v)
		}
	}
	return &quarantineInspector{git: g}
}

// Environ is the environment through which a git command run on the
// repository reads the push's objects (git's quarantine variables, none
// for a server push): what other programs run on the push need, such as
// pre-receive hook scripts.
func (q *quarantineInspector) Environ() []string { return slices.Clone(q.git.Env) }

// NewCommits implements Inspector.
func (q *quarantineInspector) NewCommits(ctx context.Context, u RefUpdate) ([]string, error) {
	if u.IsDelete() {
		return nil, nil
	}
	if !isSHA(u.NewSHA) {
		return nil, fmt.Errorf("githttp: inspect %s: bad SHA %q", u.Ref, u.NewSHA)
	}
	out, err := q.git.Output(ctx, nil, "rev-list", u.NewSHA, "--not", "--all")
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// ChangedPaths implements Inspector.
func (q *quarantineInspector) ChangedPaths(ctx context.Context, u RefUpdate) ([]string, error) {
	if u.IsDelete() {
		return nil, nil
	}
	if !isSHA(u.NewSHA) {
		return nil, fmt.Errorf("githttp: inspect %s: bad SHA %q", u.Ref, u.NewSHA)
	}
	out, err := q.git.Output(ctx, nil, "log", "-z", "--format=", "--name-only", "--no-renames", "--root",
		"--diff-merges=first-parent", u.NewSHA, "--not", "--all")
	if err != nil {
		return nil, err
	}
	return splitPaths(out), nil
}

// TreeChanges implements Inspector.
func (q *quarantineInspector) TreeChanges(ctx context.Context, u RefUpdate) ([]string, error) {
	if u.IsCreate() || u.IsDelete() {
		return nil, nil
	}
	if !isSHA(u.OldSHA) || !isSHA(u.NewSHA) {
		return nil, fmt.Errorf("githttp: inspect %s: bad SHA %q..%q", u.Ref, u.OldSHA, u.NewSHA)
	}
	out, err := q.git.Output(ctx, nil, "diff-tree", "-r", "-z", "--name-only", "--no-renames", u.OldSHA, u.NewSHA)
	if err != nil {
		return nil, err
	}
	return splitPaths(out), nil
}

// IsAncestor implements Inspector.
func (q *quarantineInspector) IsAncestor(ctx context.Context, ancestor, descendant string) (bool, error) {
	if !isSHA(ancestor) || !isSHA(descendant) {
		return false, fmt.Errorf("githttp: inspect: bad SHA %q..%q", ancestor, descendant)
	}
	return q.git.IsAncestor(ctx, ancestor, descendant)
}

// MergeCommits implements Inspector.
func (q *quarantineInspector) MergeCommits(ctx context.Context, u RefUpdate) ([]string, error) {
	if u.IsDelete() {
		return nil, nil
	}
	if !isSHA(u.NewSHA) {
		return nil, fmt.Errorf("githttp: inspect %s: bad SHA %q", u.Ref, u.NewSHA)
	}
	out, err := q.git.Output(ctx, nil, "rev-list", "--min-parents=2", u.NewSHA, "--not", "--all")
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(out)), nil
}

// NewBlobs implements Inspector: the new objects with a path, then their
// types and sizes from one `git cat-file --batch-check`.
func (q *quarantineInspector) NewBlobs(ctx context.Context, u RefUpdate) ([]Blob, error) {
	if u.IsDelete() {
		return nil, nil
	}
	if !isSHA(u.NewSHA) {
		return nil, fmt.Errorf("githttp: inspect %s: bad SHA %q", u.Ref, u.NewSHA)
	}
	out, err := q.git.Output(ctx, nil, "rev-list", "--objects", u.NewSHA, "--not", "--all")
	if err != nil || len(out) == 0 {
		return nil, err
	}
	paths, names := objectPaths(out)
	sizes, err := q.git.Output(ctx, strings.NewReader(names), "cat-file", "--batch-check=%(objectname) %(objecttype) %(objectsize)")
	if err != nil {
		return nil, err
	}
	var blobs []Blob
	for line := range strings.Lines(string(sizes)) {
		var sha, typ string
		var size int64
		if _, err := fmt.Sscan(line, &sha, &typ, &size); err == nil && typ == "blob" {
			blobs = append(blobs, Blob{Path: paths[sha], Size: size})
		}
	}
	return blobs, nil
}

// objectPaths reads `git rev-list --objects` output: the path each object
// is listed with, and the object names one a line (cat-file's input).
func objectPaths(out []byte) (map[string]string, string) {
	paths := map[string]string{}
	var names strings.Builder
	for line := range strings.Lines(string(out)) {
		sha, p, _ := strings.Cut(strings.TrimSuffix(line, "\n"), " ")
		paths[sha] = p
		names.WriteString(sha + "\n")
	}
	return paths, names.String()
}

// splitPaths turns NUL-separated git output into sorted, distinct paths.
func splitPaths(out []byte) []string {
	var paths []string
	for _, p := range bytes.Split(out, []byte{0}) {
		if len(p) > 0 {
			paths = append(paths, string(p))
		}
	}
	slices.Sort(paths)
	return slices.Compact(paths)
}

// NewCommitSignatures implements Inspector.
func (q *quarantineInspector) NewCommitSignatures(ctx context.Context, u RefUpdate) ([]CommitSignature, error) {
	commits, err := q.NewCommits(ctx, u)
	if err != nil || len(commits) == 0 {
		return nil, err
	}
	out, err := q.git.Output(ctx, strings.NewReader(strings.Join(commits, "\n")+"\n"), "cat-file", "--batch")
	if err != nil {
		return nil, err
	}
	list := make([]CommitSignature, 0, len(commits))
	for len(out) > 0 {
		head, rest, ok := bytes.Cut(out, []byte("\n"))
		fields := strings.Fields(string(head))
		if !ok || len(fields) != 3 || fields[1] != "commit" {
			return nil, fmt.Errorf("githttp: inspect %s: cat-file said %q", u.Ref, head)
		}
		size, err := strconv.Atoi(fields[2])
		if err != nil || size+1 > len(rest) {
			return nil, fmt.Errorf("githttp: inspect %s: cat-file size %q", u.Ref, head)
		}
		c := parseCommitSignature(rest[:size])
		c.SHA = fields[0]
		list = append(list, c)
		out = rest[size+1:]
	}
	return list, nil
}

// parseCommitSignature splits a raw commit into its signature (the gpgsig
// header's value, its lines unindented) and the rest, and reads its
// committer's email address.
func parseCommitSignature(raw []byte) CommitSignature {
	var c CommitSignature
	header, message, _ := bytes.Cut(raw, []byte("\n\n"))
	var payload, sig strings.Builder
	inSig := false
	for _, line := range strings.Split(string(header), "\n") {
		switch {
		case inSig && strings.HasPrefix(line, " "):
			sig.WriteString(line[1:] + "\n")
			continue
		case strings.HasPrefix(line, "gpgsig "):
			inSig = true
			sig.WriteString(strings.TrimPrefix(line, "gpgsig ") + "\n")
			continue
		case strings.HasPrefix(line, "committer "):
			if _, rest, ok := strings.Cut(line, "<"); ok {
				c.CommitterEmail, _, _ = strings.Cut(rest, ">")
			}
		}
		inSig = false
		payload.WriteString(line + "\n")
	}
	c.Signature = sig.String()
	c.Payload = payload.String() + "\n" + string(message)
	return c
}

// NewRepositoryInspector returns an Inspector of the objects already in
// the bare repository dir: for updates the server makes itself (the
// contents and refs API), whose objects are written before the
// references move.
func NewRepositoryInspector(dir string) Inspector {
	return newQuarantineInspector("git", dir, nil)
}
