// Package gitmerge merges commits in a bare repository without a work
// tree, as the server's merges need: the merged tree of two commits (git
// merge-tree --write-tree, their merge base found by git) and a commit of
// a tree with given parents, author and committer (git commit-tree), or
// signed by the server (gitwrite.WriteCommit, which writes git's commit
// and its gpgsig header).
// Pull request merges, the merges API, merge-upstream and a pull
// request's update-branch share it (and Fetch, which copies a commit
// across forks first); what moves a branch to the result is
// the caller's (githost.ServerPush).
package gitmerge

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/gitwrite"
)

// Person is a commit's author or committer. A zero When is now.
type Person struct {
	Name, Email string
	When        time.Time
}

// ErrConflict is a merge that does not apply cleanly.
var ErrConflict = errors.New("gitmerge: merge conflict")

// Tree merges the commits ours and theirs of the repository at dir
// (their merge base found by git) into a tree, and returns its SHA;
// ErrConflict when they conflict.
func Tree(ctx context.Context, dir, ours, theirs string) (string, error) {
	out, err := gitcmd.In(dir).Text(ctx, nil, "merge-tree", "--write-tree", "--no-messages", "--name-only", ours, theirs)
	if err != nil {
		if gitcmd.Said(err, 1) {
			return "", ErrConflict
		}
		return "", err
	}
	tree, _, _ := strings.Cut(out, "\n")
	return tree, nil
}

// Commit writes a commit of tree in the repository at dir with the
// parents, message (as is), author and committer, signed by sign unless
// it is nil, and returns its SHA.
func Commit(ctx context.Context, dir, tree string, parents []string, message string, author, committer Person, sign gitwrite.Signer) (string, error) {
	if sign != nil {
		return gitwrite.WriteCommit(ctx, dir, gitwrite.NewCommit{Tree: tree, Parents: parents, Message: message,
			Author: gitwrite.Identity(author), Committer: gitwrite.Identity(committer), Sign: sign})
	}
	args := []string{"commit-tree", tree}
	for _, p := range parents {
		args = append(args, "-p", p)
	}
	env := []string{"GIT_AUTHOR_NAME=" + author.Name, "GIT_AUTHOR_EMAIL=" + author.Email, "GIT_AUTHOR_DATE=" + gitDate(author.When),
		"GIT_COMMITTER_NAME=" + committer.Name, "GIT_COMMITTER_EMAIL=" + committer.Email, "GIT_COMMITTER_DATE=" + gitDate(committer.When)}
	return gitcmd.In(dir).With(env...).Text(ctx, strings.NewReader(message), args...)
}

// Merge writes the merge commit of ours and theirs (parents in that
// order) with the message, by who as author and committer, signed by
// sign unless it is nil, and returns its SHA; ErrConflict when they
// conflict.
func Merge(ctx context.Context, dir, ours, theirs, message string, who Person, sign gitwrite.Signer) (string, error) {
	tree, err := Tree(ctx, dir, ours, theirs)
	if err != nil {
		return "", err
	}
	if who.When.IsZero() {
		who.When = time.Now()
	}
	return Commit(ctx, dir, tree, []string{ours, theirs}, message, who, who, sign)
}

// Fetch copies the commit sha and its history from the repository at
// from into the one at dir, moving no reference, unless dir has it
// already: forks hold copies of their objects, so merging across them
// (a fork's upstream, a pull request's base into a fork's head) fetches
// first.
func Fetch(ctx context.Context, dir, from, sha string) error {
	git := gitcmd.In(dir)
	if err := git.Run(ctx, "cat-file", "-e", sha+"^{commit}"); err == nil {
		return nil
	} else if !gitcmd.Exited(err) {
		return err
	}
	return git.Run(ctx, "-c", "uploadpack.allowAnySHA1InWant=true", "fetch", "--quiet", "--no-tags",
		"--no-write-fetch-head", from, sha)
}

func gitDate(t time.Time) string {
	if t.IsZero() {
		t = time.Now()
	}
	return strconv.FormatInt(t.Unix(), 10) + " " + t.Format("-0700")
}
