// Package gitcmd runs the git binary for the server: one place for the
// environment every git process gets, how its failures read and how a
// "no" (exit status 1 of a question such as merge-base --is-ancestor) is
// told apart from a failure.
//
// A git process of the server sees no system or user configuration
// (GIT_CONFIG_NOSYSTEM, GIT_CONFIG_GLOBAL and HOME point away from them),
// never prompts (GIT_TERMINAL_PROMPT=0), and keeps only PATH of the
// server's own environment; a Git's Env is added after that. Git over
// HTTP (githttp's http-backend, which gets a CGI environment) is the one
// git process that is not started here.
package gitcmd

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
)

// Git is how to run git: in which repository, with what more in the
// environment, and which binary.
type Git struct {
	// Dir is the repository (GIT_DIR, and the process's working
	// directory); "" runs git outside any repository (git clone).
	Dir string
	// Env is added to the environment after the base one (identities,
	// quarantine directories, GIT_TRACE for a test).
	Env []string
	// Binary is the git executable; "" is "git" found on PATH.
	Binary string
}

// In is git in the repository dir.
func In(dir string) Git { return Git{Dir: dir} }

// With returns g with env added to its environment.
func (g Git) With(env ...string) Git {
	g.Env = append(append([]string(nil), g.Env...), env...)
	return g
}

// Command is the git process with args, not started: for callers that
// stream its input or output themselves.
func (g Git) Command(ctx context.Context, args ...string) *exec.Cmd {
	bin := g.Binary
	if bin == "" {
		bin = "git"
	}
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir = g.Dir
	cmd.Env = append(g.baseEnv(), g.Env...)
	return cmd
}

// baseEnv is what every git process of the server starts from.
func (g Git) baseEnv() []string {
	home := g.Dir
	if home == "" {
		home = os.DevNull
	}
	env := []string{"PATH=" + os.Getenv("PATH"), "HOME=" + home, "GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=" + os.DevNull, "GIT_TERMINAL_PROMPT=0"}
	if g.Dir != "" {
		env = append(env, "GIT_DIR="+g.Dir)
	}
	return env
}

// Output runs git with args, stdin as its input when not nil, and returns
// its standard output. A failure is an *Error quoting git's stderr.
func (g Git) Output(ctx context.Context, stdin io.Reader, args ...string) ([]byte, error) {
	cmd := g.Command(ctx, args...)
	cmd.Stdin = stdin
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		return stdout.Bytes(), &Error{Args: args, Err: err, Stderr: strings.TrimSpace(stderr.String())}
	}
	return stdout.Bytes(), nil
}

// Text is Output as a string without the trailing newline.
func (g Git) Text(ctx context.Context, stdin io.Reader, args ...string) (string, error) {
	out, err := g.Output(ctx, stdin, args...)
	return strings.TrimRight(string(out), "\n"), err
}

// Run runs git with args, its output discarded (but for the error's).
func (g Git) Run(ctx context.Context, args ...string) error {
	_, err := g.Output(ctx, nil, args...)
	return err
}

// IsAncestor reports whether commit ancestor is reachable from commit
// descendant (a commit is its own ancestor), by git merge-base
// --is-ancestor: a push from old to new is a fast forward exactly when
// IsAncestor(old, new).
func (g Git) IsAncestor(ctx context.Context, ancestor, descendant string) (bool, error) {
	err := g.Run(ctx, "merge-base", "--is-ancestor", ancestor, descendant)
	if Said(err, 1) {
		return false, nil
	}
	return err == nil, err
}

// Error is a git process that failed: its arguments, how it ended and
// what it wrote to stderr.
type Error struct {
	Args   []string
	Err    error // an *exec.ExitError, or why git did not start
	Stderr string
}

func (e *Error) Error() string {
	sub := "git"
	if len(e.Args) > 0 {
		sub += " " + e.Args[0]
	}
	if e.Stderr == "" {
		return fmt.Sprintf("%s: %v", sub, e.Err)
	}
	return fmt.Sprintf("%s: %v: %s", sub, e.Err, e.Stderr)
}

// Unwrap is the process's error (errors.As finds the *exec.ExitError).
func (e *Error) Unwrap() error { return e.Err }

// Said reports whether err is git having run and exited with status
// code: the answer of a question (1: "no"), not a failure to run.
func Said(err error, code int) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() == code
}

// Exited reports whether err is git having run and exited with a
// status other than 0 (as opposed to not starting, or being killed by its
// context).
func Exited(err error) bool {
	var exit *exec.ExitError
	return errors.As(err, &exit) && exit.ExitCode() > 0
}
