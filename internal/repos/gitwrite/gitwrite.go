// Package gitwrite writes git objects into a bare repository with the git
// binary: a blob, and a commit that changes one path of a parent commit's
// tree. It never moves a reference: the caller does, as a push (see
// githost.Handler.ServerPush), so that every change of a reference is
// checked, logged and recorded the same way.
package gitwrite

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// Identity is a commit's author or committer.
type Identity struct {
	Name, Email string
	When        time.Time
}

// Change is a commit that sets or removes one path.
type Change struct {
	Parent    string // the parent commit's SHA; "" for a root commit
	Path      string
	Content   []byte // the file's new content; nil with Delete
	Delete    bool
	Message   string
	Author    Identity
	Committer Identity
}

// Commit writes the blob and the commit of the change into the bare
// repository dir and returns the commit's and the blob's SHAs (the blob's
// "" for a deletion). The trees are built in a temporary index, so the
// repository's own state is untouched.
func Commit(ctx context.Context, dir string, c Change) (commitSHA, blobSHA string, err error) {
	index, err := os.CreateTemp("", "forgeapi-index-*")
	if err != nil {
		return "", "", err
	}
	index.Close()
	os.Remove(index.Name()) // git creates it; the name stays unique
	defer os.Remove(index.Name())
	// update-index wants a work tree even for index-only changes: an
	// empty one, which nothing reads or writes.
	worktree, err := os.MkdirTemp("", "forgeapi-worktree-*")
	if err != nil {
		return "", "", err
	}
	defer os.RemoveAll(worktree)
	env := []string{"GIT_DIR=" + dir, "GIT_WORK_TREE=" + worktree, "GIT_INDEX_FILE=" + index.Name(), "GIT_CONFIG_NOSYSTEM=1",
		"HOME=" + dir, "PATH=" + os.Getenv("PATH")}
	run := func(stdin []byte, extra []string, args ...string) (string, error) {
		cmd := exec.CommandContext(ctx, "git", args...)
		cmd.Env = append(env, extra...)
		cmd.Dir = dir
		if stdin != nil {
			cmd.Stdin = bytes.NewReader(stdin)
		}
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("gitwrite: git %s: %w: %s", args[0], err, strings.TrimSpace(stderr.String()))
		}
		return strings.TrimSpace(string(out)), nil
	}
	if c.Parent != "" {
		if _, err := run(nil, nil, "read-tree", c.Parent); err != nil {
			return "", "", err
		}
	}
	if c.Delete {
		if _, err := run(nil, nil, "update-index", "--force-remove", "--", c.Path); err != nil {
			return "", "", err
		}
	} else {
		if blobSHA, err = run(c.Content, nil, "hash-object", "-w", "--stdin"); err != nil {
			return "", "", err
		}
		if _, err := run(nil, nil, "update-index", "--add", "--cacheinfo", "100644,"+blobSHA+","+filepath.ToSlash(c.Path)); err != nil {
			return "", "", err
		}
	}
	tree, err := run(nil, nil, "write-tree")
	if err != nil {
		return "", "", err
	}
	args := []string{"commit-tree", tree, "-F", "-"}
	if c.Parent != "" {
		args = append(args, "-p", c.Parent)
	}
	ids := []string{"GIT_AUTHOR_NAME=" + c.Author.Name, "GIT_AUTHOR_EMAIL=" + c.Author.Email, "GIT_AUTHOR_DATE=" + gitDate(c.Author.When),
		"GIT_COMMITTER_NAME=" + c.Committer.Name, "GIT_COMMITTER_EMAIL=" + c.Committer.Email, "GIT_COMMITTER_DATE=" + gitDate(c.Committer.When)}
	commitSHA, err = run([]byte(c.Message), ids, args...)
	return commitSHA, blobSHA, err
}

// gitDate renders a time as git's raw date: seconds and zone.
func gitDate(t time.Time) string {
	if t.IsZero() {
		t = time.Now()
	}
	return fmt.Sprintf("%d %s", t.Unix(), t.Format("-0700"))
}
