// Package gitdiff serves the diff and patch media types of what shows a
// change between revisions (a pull request, a commit, a comparison), as
// the platform does: Accept: application/vnd.github.diff (or .v3.diff,
// or the spec's application/vnd.service.diff) is the unified diff as
// `git diff` writes it, and the .patch forms the patch series as `git
// format-patch --stdout` writes it. Both come from the git binary
// (through gitcmd) and are streamed to the client as git writes them,
// never held whole; a change over the platform's limits (MaxFiles,
// MaxLines) is refused first with the platform's 406.
package gitdiff

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/httpapi"
)

// The platform's limits of a diff or patch answer: a change that touches
// more files, or adds and deletes more lines in all, is refused with 406
// (the JSON lists of files are the way to read it).
const (
	MaxFiles = 300
	MaxLines = 20000
)

// Format is a media type of a change other than JSON.
type Format string

// The formats of a change.
const (
	Diff  Format = "diff"
	Patch Format = "patch"
)

// Media lists the media type parameters of the formats, for the
// httpapi.Route.StreamMedia of a route that serves them.
func Media() []string { return []string{string(Diff), string(Patch)} }

// Requested returns the format the request's Accept header asks for,
// or "" when it asks for another media type (JSON).
func Requested(r *http.Request) Format {
	switch f := Format(httpapi.MediaParam(r)); f {
	case Diff, Patch:
		return f
	}
	return ""
}

// ContentType is the Content-Type of an answer in the format, the
// platform's.
func (f Format) ContentType() string {
	return "application/vnd.github." + string(f) + "; charset=utf-8"
}

// emptyTree is the object name of the tree with no entries, which git
// knows without storing it: the "before" of a root commit.
const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"

// Change is what a diff or patch answer shows. Make one with Between or
// Commit.
type Change struct {
	// Resource names the change in the 406's errors[] (PullRequest,
	// Commit, Comparison).
	Resource string
	// from and to are the commits whose trees the diff compares.
	from, to string
	// patch is the arguments of the git command that writes the patch.
	patch []string
}

// Between is the change from base to head, as a pull request or a
// comparison shows it: the diff from their merge base (mergeBase; "" when
// they have none, which compares with the empty tree) to head, and the
// patches of the commits of head that base does not reach, oldest first.
// The revisions are commit object names.
func Between(resource, base, mergeBase, head string) Change {
	if mergeBase == "" {
		mergeBase = emptyTree
	}
	return Change{Resource: resource, from: mergeBase, to: head,
		patch: []string{"format-patch", "--stdout", base + ".." + head}}
}

// Commit is the change a commit makes, against its first parent (a root
// commit against the empty tree): its diff, and its patch. git
// format-patch writes no patch of a merge commit, whose patch is its
// message and its diff against its first parent in the same shape, from
// git show (without format-patch's signature).
func Commit(sha string, parents []string) Change {
	c := Change{Resource: "Commit", from: emptyTree, to: sha,
		patch: []string{"format-patch", "--stdout", "-1", sha}}
	if len(parents) > 0 {
		c.from = parents[0]
	}
	if len(parents) > 1 {
		c.patch = []string{"show", "--pretty=email", "--patch-with-stat", "--summary", "--diff-merges=first-parent", sha}
	}
	return c
}

// args are the arguments of the git command that writes the change in
// the format.
func (c Change) args(f Format) []string {
	if f == Patch {
		return c.patch
	}
	return []string{"diff", "--no-ext-diff", "--no-textconv", c.from, c.to}
}

// Serve answers a request for the change in the format, from the
// repository git runs in: the ETag of the change and a 304 when the
// client has it; the 406 of a change over MaxFiles or MaxLines; else 200
// with the format's Content-Type and git's output, streamed. A git that
// fails before writing anything is an error (the caller's 500); one that
// fails after is logged and the response cut short (the connection is
// aborted, so that the client cannot take it for the whole).
func Serve(w http.ResponseWriter, r *http.Request, git gitcmd.Git, c Change, f Format) error {
	ctx := r.Context()
	etag := httpapi.ETag(auth.PrincipalFrom(ctx).CacheKey(), string(f)+" "+strings.Join(c.args(f), " "))
	if httpapi.NotModified(w, r, etag) {
		return nil
	}
	if err := c.check(ctx, git); err != nil {
		return err
	}
	w.Header().Set("Content-Type", f.ContentType())
	out := &startedWriter{w: w}
	err := stream(ctx, git, out, c.args(f))
	switch {
	case err == nil:
		return nil
	case !out.started:
		return err
	case ctx.Err() == nil:
		slog.ErrorContext(ctx, "git stopped in the middle of a diff answer", "path", r.URL.Path, "err", err)
	}
	panic(http.ErrAbortHandler)
}

// stream runs git with args, its standard output written to w as it
// comes; a failure is a gitcmd.Error quoting git's stderr.
func stream(ctx context.Context, git gitcmd.Git, w io.Writer, args []string) error {
	cmd := git.Command(ctx, args...)
	var stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = w, &stderr
	if err := cmd.Run(); err != nil {
		return &gitcmd.Error{Args: args, Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	return nil
}

// startedWriter tells whether anything was written through it.
type startedWriter struct {
	w       io.Writer
	started bool
}

func (s *startedWriter) Write(p []byte) (int, error) {
	s.started = true
	return s.w.Write(p)
}

// check measures the change's diff (git diff --numstat) and returns the
// platform's 406 when it touches more than MaxFiles files or adds and
// deletes more than MaxLines lines; it stops git as soon as the diff is
// over a limit.
func (c Change) check(ctx context.Context, git gitcmd.Git) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	cmd := git.Command(ctx, "diff", "--numstat", "--no-ext-diff", "--no-textconv", c.from, c.to)
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		return err
	}
	tooLarge := measure(stdout, c.Resource)
	if tooLarge != nil {
		cancel() // the rest of the diff does not matter
	}
	_, _ = io.Copy(io.Discard, stdout) // what measure left, so that git ends
	err = cmd.Wait()
	switch {
	case tooLarge != nil:
		return tooLarge
	case err != nil:
		return &gitcmd.Error{Args: cmd.Args[1:], Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	return nil
}

// measure reads git diff --numstat output (a line per file: added and
// deleted lines, "-" for a binary file, and the path) and returns the
// 406 of the first limit it goes over, nil when it ends within both (or
// at a line longer than a path can be).
func measure(numstat io.Reader, resource string) *apierr.Error {
	files, lines := 0, 0
	sc := bufio.NewScanner(numstat)
	sc.Buffer(make([]byte, 0, 4096), 1<<20)
	for sc.Scan() {
		files++
		if files > MaxFiles {
			return tooLarge(resource, true)
		}
		added, rest, _ := strings.Cut(sc.Text(), "\t")
		deleted, _, _ := strings.Cut(rest, "\t")
		a, _ := strconv.Atoi(added) // "-" (binary) counts no lines
		d, _ := strconv.Atoi(deleted)
		if lines += a + d; lines > MaxLines {
			return tooLarge(resource, false)
		}
	}
	return nil
}

// tooLarge is the platform's 406 for a diff over MaxFiles (files) or
// MaxLines.
func tooLarge(resource string, files bool) *apierr.Error {
	msg := fmt.Sprintf("Sorry, the diff exceeded the maximum number of lines (%d)", MaxLines)
	if files {
		instead := "locally cloning the repository"
		if resource == "PullRequest" {
			instead = "using 'List pull requests files' API or " + instead
		}
		msg = fmt.Sprintf("Sorry, the diff exceeded the maximum number of files (%d). Consider %s instead.", MaxFiles, instead)
	}
	return &apierr.Error{Status: http.StatusNotAcceptable, Message: msg,
		Errors: []apierr.FieldError{{Resource: resource, Field: "diff", Code: "too_large"}}}
}
