// Package gitwrite writes git objects into a bare repository: a blob, and
// a commit that changes one path of a parent commit's tree. It writes
// them in process, as loose objects, exactly as git's read-tree,
// hash-object, update-index, write-tree and commit-tree would (the same
// objects, so the same SHAs, and the same refusals), without running git.
// It never moves a reference: the caller does, as a push (see
// githost.Handler.ServerPush), so that every change of a reference is
// checked, logged and recorded the same way.
//
// The repository is taken to have git's defaults where they would change
// what git writes (the server creates its repositories so): SHA-1 object
// names, i18n.commitEncoding UTF-8, no commit.gpgSign, core.protectNTFS
// on and core.protectHFS off.
package gitwrite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/go-git/go-billy/v5/osfs"
	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/cache"
	"github.com/go-git/go-git/v5/storage/filesystem"
)

// Identity is a commit's author or committer. When is the date; the zero
// time is the time of the write.
type Identity struct {
	Name, Email string
	When        time.Time
}

// Signer signs a commit the server writes: it returns the armored
// signature of payload (the commit object without a gpgsig header).
type Signer interface {
	SignCommit(payload []byte) (string, error)
}

// Change is a commit that sets or removes one path.
type Change struct {
	// Sign, when set, signs the commit (its gpgsig header).
	Sign      Signer
	Parent    string // the parent commit's SHA; "" for a root commit
	Path      string // slash-separated, relative to the root
	Content   []byte // the file's new content; nil with Delete
	Delete    bool
	Message   string
	Author    Identity
	Committer Identity
}

// Commit writes the blob and the commit of the change into the bare
// repository dir and returns the commit's and the blob's SHAs (the blob's
// "" for a deletion). No reference moves and nothing else of the
// repository changes.
//
// The commit is the one `git read-tree Parent`, `git hash-object -w
// --stdin` of the content, `git update-index --add --cacheinfo
// 100644,BLOB,Path` (for a deletion `--force-remove Path`), `git
// write-tree` and `git commit-tree -F -` (the message as is, after -p
// Parent) with GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_AUTHOR_DATE and the
// committer's set from the identities would write:
//
//   - the file is written with mode 100644, or 100755 where the path
//     held an executable file, which stays one as on the platform (a
//     symbolic link or a submodule becomes a regular file);
//   - only the trees along Path are rewritten (in git's order, with
//     canonical modes and no subtree that holds no file); every other
//     subtree keeps its SHA;
//   - deleting a path that is not there, or that git refuses as a path,
//     changes no entry;
//   - names and emails lose git's "crud" at their ends and '\n', '<',
//     '>' inside; dates keep their zone; the commit's bytes that are not
//     UTF-8 as git reads it are re-encoded as Latin-1.
//
// It fails, having written no commit, where git fails: a parent tree
// holding a path git refuses (".git" in any case, NTFS aliases of it, and
// so on) anywhere, a Path git refuses or that would be both a file and a
// directory, an empty name or one of only disallowed characters, a date
// before 1973-03-03 or from 2100 (which git does not read as seconds), a
// NUL byte in the message, a name or an email. Deleting a directory that
// holds files is an error (git would rewrite the whole directory; callers
// delete files). Unlike git's write-tree it does not check that the
// objects named by the trees it rewrites exist: the parent is a branch
// head, whose objects git checked when it was pushed. Every refusal of
// what the change asks is a *Refusal; other errors are the server's.
func Commit(ctx context.Context, dir string, c Change) (commitSHA, blobSHA string, err error) {
	if err := ctx.Err(); err != nil {
		return "", "", err
	}
	if strings.IndexByte(c.Message, 0) >= 0 {
		return "", "", refuse("a NUL byte in commit log message not allowed")
	}
	if strings.IndexByte(c.Path, 0) >= 0 {
		return "", "", refuse("a NUL byte in the path")
	}
	author, err := identLine(c.Author)
	if err != nil {
		return "", "", err
	}
	committer, err := identLine(c.Committer)
	if err != nil {
		return "", "", err
	}
	if info, err := os.Stat(filepath.Join(dir, "objects")); err != nil || !info.IsDir() {
		return "", "", fmt.Errorf("gitwrite: no repository at %s", dir)
	}
	st := filesystem.NewStorageWithOptions(osfs.New(dir), cache.NewObjectLRU(cache.MiByte), filesystem.Options{KeepDescriptors: true})
	defer st.Close()
	r := &treeReader{st: st}

	var root []entry // the parent's tree; nil for a root commit
	var parentTree plumbing.Hash
	if c.Parent != "" {
		if parentTree, err = r.commitTree(c.Parent); err != nil {
			return "", "", err
		}
		if root, err = r.tree(parentTree); err != nil {
			return "", "", err
		}
		s, ok := cachedSummary(parentTree)
		if !ok {
			if s, err = r.summaryOf(root); err != nil {
				return "", "", err
			}
			rememberSummary(parentTree, s)
		}
		if !s.valid {
			return "", "", refuse("the tree of %s holds a path git refuses", c.Parent)
		}
	}

	ed := &edit{r: r, dir: dir, path: c.Path, delete: c.Delete}
	if !c.Delete {
		if !verifyPath(c.Path, modeFile) {
			return "", "", refuse("invalid path '%s'", c.Path)
		}
		if ed.blob, err = writeObject(dir, "blob", c.Content); err != nil {
			return "", "", err
		}
		blobSHA = ed.blob.String()
	}
	// update-index --force-remove ignores a path git refuses: the
	// index stays the parent's, and so does the tree.
	tree, ok := parentTree, c.Parent != ""
	if !c.Delete || verifyPath(c.Path, 0) {
		if tree, ok, err = ed.apply(root, strings.Split(c.Path, "/")); err != nil {
			return "", "", err
		}
	}
	if !ok {
		if tree, err = writeObject(dir, "tree", nil); err != nil { // the empty tree
			return "", "", err
		}
	}

	var buf bytes.Buffer
	buf.Grow(256 + len(c.Message))
	fmt.Fprintf(&buf, "tree %s\n", tree)
	if c.Parent != "" {
		fmt.Fprintf(&buf, "parent %s\n", plumbing.NewHash(c.Parent))
	}
	fmt.Fprintf(&buf, "author %s\ncommitter %s\n\n", author, committer)
	buf.WriteString(c.Message)
	data, err := signCommit(buf.Bytes(), "", c.Sign)
	if err != nil {
		return "", "", err
	}
	commit, err := writeObject(dir, "commit", data)
	if err != nil {
		return "", "", err
	}
	return commit.String(), blobSHA, nil
}

// commitTree returns the tree of the commit sha.
func (r *treeReader) commitTree(sha string) (plumbing.Hash, error) {
	if !plumbing.IsHash(sha) {
		return plumbing.ZeroHash, fmt.Errorf("gitwrite: not a valid object name %s", sha)
	}
	data, err := r.object(plumbing.CommitObject, plumbing.NewHash(sha))
	if err != nil {
		return plumbing.ZeroHash, err
	}
	line, _, _ := bytes.Cut(data, []byte("\n"))
	hexID, ok := bytes.CutPrefix(line, []byte("tree "))
	if !ok || !plumbing.IsHash(string(hexID)) {
		return plumbing.ZeroHash, fmt.Errorf("gitwrite: commit %s has no tree", sha)
	}
	return plumbing.NewHash(string(hexID)), nil
}

// Refusal is the error of a change git refuses for what it asks: its
// path, an identity, a date, the message, or a parent tree that holds a
// path git refuses. Callers answer it as the client's error (422), never
// as the server's.
type Refusal struct{ Reason string }

func (e *Refusal) Error() string { return "gitwrite: " + e.Reason }

// refuse returns the Refusal with the formatted reason.
func refuse(format string, args ...any) error { return &Refusal{Reason: fmt.Sprintf(format, args...)} }
