package gists

import (
	"context"
	"errors"
	"os"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitwrite"
)

// Branch is the branch a new gist's files are committed on; a gist shows
// the tip of whatever branch its HEAD names.
const Branch = "main"

// MaxFiles is how many files a gist may hold, and MaxContent the largest
// file content the API shows whole: a longer one is cut and marked
// truncated (the raw URL serves it all), as the platform does.
const (
	MaxFiles   = 300
	MaxContent = 1 << 20
)

// File is one file of a gist at a revision.
type File struct {
	Name    string
	BlobSHA string
	Size    int64
	Content []byte // nil unless read
}

// Revision is one commit of a gist's history with its line counts.
type Revision struct {
	gitread.Commit
	Additions, Deletions int
}

// fileEdit is one file of a change: Delete removes Name; otherwise the
// file NewName (Name when empty) gets Content, or keeps the old content
// when Content is nil (a rename).
type fileEdit struct {
	Name    string
	NewName string
	Content *string
	Delete  bool
}

// checkFilename refuses a name git or a gist cannot hold: gists are flat.
func checkFilename(name string) error {
	if name == "" || strings.Contains(name, "/") {
		return apierr.Custom("Gist", "files", "filename %q is not valid: a gist's files have plain names", name)
	}
	if err := gitwrite.CheckPath(name); err != nil {
		return apierr.Custom("Gist", "files", "filename %q is not valid", name)
	}
	return nil
}

// head returns the SHA of the gist's tip ("" for an empty repository).
func head(dir string) (string, error) {
	r, err := gitread.Open(dir)
	if err != nil {
		return "", err
	}
	defer r.Close()
	sha, err := r.Resolve("HEAD")
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return "", nil
	}
	return sha, err
}

// headRef returns the reference HEAD names (refs/heads/main).
func headRef(ctx context.Context, dir string) (string, error) {
	return gitcmd.In(dir).Text(ctx, nil, "symbolic-ref", "HEAD")
}

// Files returns the files of the gist's repository at rev ("HEAD" for
// its tip), with their content when withContent. A gist at an unborn
// HEAD has none.
func Files(dir, rev string, withContent bool) ([]File, error) {
	r, err := gitread.Open(dir)
	if err != nil {
		return nil, err
	}
	defer r.Close()
	entries, err := r.ListDir(rev, "")
	if errors.Is(err, gitread.ErrRevisionNotFound) && rev == "HEAD" {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	files := make([]File, 0, len(entries))
	for _, e := range entries {
		if e.Type != gitread.EntryFile {
			continue // a pushed directory or submodule is no gist file
		}
		f := File{Name: e.Name, BlobSHA: e.SHA, Size: e.Size}
		if withContent {
			if f.Content, err = r.ReadBlob(e.SHA); err != nil {
				return nil, err
			}
		}
		files = append(files, f)
	}
	return files, nil
}

// commit writes the edits on top of parent ("" for the first commit),
// signed with sign when set, and moves ref to the new commit if it is
// still at parent. It returns the new commit, or "" when the edits
// change nothing.
func commit(ctx context.Context, dir, ref, parent string, edits []fileEdit, actor *accounts.Account, sign gitwrite.Signer) (string, error) {
	baseTree := ""
	var old map[string]File
	if parent != "" {
		files, err := Files(dir, parent, false)
		if err != nil {
			return "", err
		}
		old = map[string]File{}
		for _, f := range files {
			old[f.Name] = f
		}
		r, err := gitread.Open(dir)
		if err != nil {
			return "", err
		}
		baseTree, err = r.TreeSHA(parent)
		r.Close()
		if err != nil {
			return "", err
		}
	}
	tree, err := writeTree(ctx, dir, baseTree, old, edits)
	if err != nil {
		return "", err
	}
	if tree == baseTree {
		return "", nil
	}
	if err := checkTreeSize(dir, tree); err != nil {
		return "", err
	}
	who := gitwrite.Identity{Name: actor.Login, Email: commitEmail(actor)}
	c := gitwrite.NewCommit{Tree: tree, Author: who, Committer: who, Sign: sign}
	if parent != "" {
		c.Parents = []string{parent}
	}
	sha, err := gitwrite.WriteCommit(ctx, dir, c)
	if err != nil {
		return "", refusal(err)
	}
	oldValue := parent
	if oldValue == "" {
		oldValue = strings.Repeat("0", 40)
	}
	if err := gitcmd.In(dir).Run(ctx, "update-ref", ref, sha, oldValue); err != nil {
		return "", apierr.New(409, "The gist changed while it was being edited; try again.")
	}
	return sha, nil
}

// writeTree applies the edits to the tree baseTree whose files are old.
func writeTree(ctx context.Context, dir, baseTree string, old map[string]File, edits []fileEdit) (string, error) {
	var tes []gitwrite.TreeEdit
	for _, e := range edits {
		cur, exists := old[e.Name]
		switch {
		case e.Delete:
			if exists {
				tes = append(tes, gitwrite.TreeEdit{Path: e.Name, Delete: true})
			}
			continue
		case e.Content == nil && !exists:
			return "", apierr.Custom("Gist", "files", "file %q has no content", e.Name)
		}
		name := e.Name
		if e.NewName != "" && e.NewName != e.Name {
			if err := checkFilename(e.NewName); err != nil {
				return "", err
			}
			if exists {
				tes = append(tes, gitwrite.TreeEdit{Path: e.Name, Delete: true})
			}
			name = e.NewName
		}
		sha := cur.BlobSHA
		if e.Content != nil {
			var err error
			if sha, err = gitwrite.WriteBlob(dir, []byte(*e.Content)); err != nil {
				return "", err
			}
		}
		tes = append(tes, gitwrite.TreeEdit{Path: name, Mode: gitwrite.ModeFile, SHA: sha})
	}
	tree, err := gitwrite.WriteTree(ctx, dir, baseTree, tes)
	return tree, refusal(err)
}

// checkTreeSize refuses a tree with no file or more than MaxFiles.
func checkTreeSize(dir, tree string) error {
	r, err := gitread.Open(dir)
	if err != nil {
		return err
	}
	defer r.Close()
	entries, err := r.ListTree(tree, "")
	if err != nil {
		return err
	}
	switch {
	case len(entries) == 0:
		return apierr.Custom("Gist", "files", "a gist needs at least one file")
	case len(entries) > MaxFiles:
		return apierr.Custom("Gist", "files", "a gist holds at most %d files", MaxFiles)
	}
	return nil
}

// refusal turns git's refusal of a name or content into the client's 422.
func refusal(err error) error {
	var r *gitwrite.Refusal
	if errors.As(err, &r) {
		return apierr.Custom("Gist", "files", "%s", r.Reason)
	}
	return err
}

// commitEmail is the email a gist commit by the account carries: its own,
// or its noreply address.
func commitEmail(a *accounts.Account) string {
	if a.Email != "" {
		return a.Email
	}
	return a.Login + "@users.noreply.forgeapi.local"
}

// initRepo creates the gist's empty bare repository.
func initRepo(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	return githttp.Init(dir, Branch)
}

// History returns a page of the gist's commits, newest first, with their
// line counts, and whether more follow.
func History(ctx context.Context, dir string, skip, limit int) ([]Revision, bool, error) {
	r, err := gitread.Open(dir)
	if err != nil {
		return nil, false, err
	}
	defer r.Close()
	commits, more, err := r.Log(ctx, gitread.LogQuery{Head: "HEAD", Skip: skip, Limit: limit})
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	out := make([]Revision, 0, len(commits))
	for _, c := range commits {
		rev := Revision{Commit: c}
		base := ""
		if len(c.ParentSHAs) > 0 {
			base = c.ParentSHAs[0]
		}
		diffs, _, err := r.Diff(ctx, base, c.SHA, MaxFiles)
		if err != nil {
			return nil, false, err
		}
		for _, d := range diffs {
			rev.Additions += d.Additions
			rev.Deletions += d.Deletions
		}
		out = append(out, rev)
	}
	return out, more, nil
}

// revision resolves sha to a commit of the gist's history: a full or
// abbreviated commit SHA reachable from its tip.
func revision(ctx context.Context, dir, sha string) (string, error) {
	if len(sha) < 4 || len(sha) > 40 || strings.Trim(sha, "0123456789abcdef") != "" {
		return "", apierr.NotFound()
	}
	r, err := gitread.Open(dir)
	if err != nil {
		return "", err
	}
	defer r.Close()
	full, err := r.Resolve(sha)
	if err != nil {
		return "", apierr.NotFound()
	}
	tip, err := r.Resolve("HEAD")
	if err != nil {
		return "", apierr.NotFound()
	}
	if ok, err := r.IsAncestor(ctx, full, tip); err != nil || !ok {
		return "", apierr.NotFound()
	}
	return full, nil
}
