package pulls

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/gitmerge"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitwrite"
)

// gitDir runs git in a bare repository, without a work tree.
type gitDir string

// person is a commit's author or committer.
type person = gitmerge.Person

// errConflict is a merge that does not apply cleanly.
var errConflict = gitmerge.ErrConflict

// run runs git with args and extra environment, stdin when not "", and
// returns its standard output without the trailing newline.
func (g gitDir) run(ctx context.Context, env []string, stdin string, args ...string) (string, error) {
	var in io.Reader
	if stdin != "" {
		in = strings.NewReader(stdin)
	}
	return gitcmd.In(string(g)).With(env...).Text(ctx, in, args...)
}

// commit resolves rev to a commit SHA; ok is false when it names none.
func (g gitDir) commit(ctx context.Context, rev string) (sha string, ok bool, err error) {
	return gitread.ResolveCommit(ctx, gitcmd.In(string(g)), rev)
}

// setRef points ref at sha, whatever it was.
func (g gitDir) setRef(ctx context.Context, ref, sha string) error {
	_, err := g.run(ctx, nil, "", "update-ref", ref, sha)
	return err
}

// deleteRef removes ref when it exists.
func (g gitDir) deleteRef(ctx context.Context, ref string) error {
	_, err := g.run(ctx, nil, "", "update-ref", "-d", ref)
	return err
}

// fetch copies the commit sha of the repository at from into ref (the
// head of a pull request from a fork: forks hold copies, not alternates).
func (g gitDir) fetch(ctx context.Context, from, sha, ref string) error {
	if _, ok, err := g.commit(ctx, sha); err != nil || ok {
		if err == nil {
			err = g.setRef(ctx, ref, sha)
		}
		return err
	}
	_, err := g.run(ctx, nil, "", "fetch", "--quiet", "--no-tags", from, "+"+sha+":"+ref)
	return err
}

// mergeTree merges the commits ours and theirs (their merge base found
// by git) into a tree without a work tree; errConflict when they conflict.
func (g gitDir) mergeTree(ctx context.Context, ours, theirs string) (string, error) {
	return gitmerge.Tree(ctx, string(g), ours, theirs)
}

// commitTree writes a commit of tree with the parents, message, author
// and committer, signed by sign unless it is nil, and returns its SHA.
func (g gitDir) commitTree(ctx context.Context, tree string, parents []string, message string, author, committer person, sign gitwrite.Signer) (string, error) {
	return gitmerge.Commit(ctx, string(g), tree, parents, message, author, committer, sign)
}

// commitInfo is what a rebase keeps of a commit.
type commitInfo struct {
	SHA, Tree string
	Parents   []string
	Author    person
	Message   string
}

// readCommit reads a commit's tree, parents, author and message.
func (g gitDir) readCommit(ctx context.Context, sha string) (commitInfo, error) {
	out, err := g.run(ctx, nil, "", "show", "-s", "--format=%T%n%P%n%an%n%ae%n%at%n%B", sha)
	if err != nil {
		return commitInfo{}, err
	}
	lines := strings.SplitN(out, "\n", 6)
	if len(lines) < 5 {
		return commitInfo{}, fmt.Errorf("git show %s: unexpected output", sha)
	}
	secs, _ := strconv.ParseInt(lines[4], 10, 64)
	c := commitInfo{SHA: sha, Tree: lines[0], Parents: strings.Fields(lines[1]),
		Author: person{Name: lines[2], Email: lines[3], When: time.Unix(secs, 0).UTC()}}
	if len(lines) == 6 {
		c.Message = lines[5]
	}
	return c, nil
}

// between lists the commits of head that base does not reach, oldest
// first.
func (g gitDir) between(ctx context.Context, base, head string) ([]string, error) {
	out, err := g.run(ctx, nil, "", "rev-list", "--reverse", "--topo-order", head, "^"+base)
	if err != nil || out == "" {
		return nil, err
	}
	return strings.Split(out, "\n"), nil
}

// stats counts the commits of head that base does not reach and the
// files, added and deleted lines of head against their merge base.
func (g gitDir) stats(ctx context.Context, base, head string) (commits, additions, deletions, files int, err error) {
	list, err := g.between(ctx, base, head)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	mb, err := g.run(ctx, nil, "", "merge-base", base, head)
	if err != nil {
		return len(list), 0, 0, 0, nil // unrelated histories: nothing to diff against
	}
	out, err := g.run(ctx, nil, "", "diff", "--numstat", "--no-renames", mb, head)
	if err != nil {
		return 0, 0, 0, 0, err
	}
	for line := range strings.SplitSeq(out, "\n") {
		f := strings.Fields(line)
		if len(f) < 3 {
			continue
		}
		a, _ := strconv.Atoi(f[0]) // "-" for binary files
		d, _ := strconv.Atoi(f[1])
		additions, deletions, files = additions+a, deletions+d, files+1
	}
	return len(list), additions, deletions, files, nil
}

// isAncestor reports whether commit a is reachable from commit b.
func (g gitDir) isAncestor(ctx context.Context, a, b string) (bool, error) {
	return gitcmd.In(string(g)).IsAncestor(ctx, a, b)
}
