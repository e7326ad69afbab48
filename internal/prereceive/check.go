package prereceive

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/githost"
	"forgeapi/internal/protection"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// maxOutput is how much of a script's output (stdout and stderr) is kept
// and shown.
const maxOutput = 64 << 10

// CheckPush is the githost.PushCheck of pre-receive hooks: it runs, in
// the order they were made, the scripts of the hooks enabled or testing
// at the pushed repository (see InForce). An enabled hook's script that
// exits non-zero, cannot run or runs past the timeout refuses the push:
// the git client sees the script's output as remote: lines and an API
// client a 409 naming the hook and quoting the output. A testing hook's
// result is logged and never refuses.
func (s *Service) CheckPush(ctx context.Context, push *githost.Push) error {
	hooks, settings, err := s.InForce(ctx, push.Repo)
	if err != nil || len(hooks) == 0 {
		return err
	}
	env, err := s.environ(ctx, push)
	if err != nil {
		return err
	}
	stdin := stdinOf(push.Updates)
	for i, h := range hooks {
		out, runErr := s.run(ctx, h, env, stdin)
		if runErr == nil {
			continue
		}
		if errors.Is(runErr, errInternal) {
			return runErr
		}
		if settings[i].Enforcement == Testing {
			s.logger().Info("pre-receive hook in testing refused a push (let through)", "hook", h.Name,
				"repository", push.Repo.FullName(), "result", runErr.Error(), "output", out)
			continue
		}
		return refusal(h, out, runErr)
	}
	return nil
}

// errInternal marks a failure of the server's own (the script could not
// be read or written), which is not the script's refusal.
var errInternal = errors.New("prereceive: internal failure")

// refusal is the push's refusal by the hook h whose script printed out.
func refusal(h *Hook, out string, runErr error) error {
	text := strings.TrimRight(out, "\n")
	if text == "" {
		text = runErr.Error()
	}
	apiText := strings.Join(strings.Fields(strings.ReplaceAll(text, "\n", " ")), " ")
	return &githttp.RefusalError{
		Message:    text + "\nerror: pre-receive hook " + strconv.Quote(h.Name) + " declined the push",
		APIMessage: "Pre-receive hook " + strconv.Quote(h.Name) + " declined the push: " + apiText,
	}
}

// stdinOf is a script's stdin: one "<old> <new> <ref>" line per update.
func stdinOf(updates []githttp.RefUpdate) []byte {
	var b bytes.Buffer
	for _, u := range updates {
		fmt.Fprintf(&b, "%s %s %s\n", u.OldSHA, u.NewSHA, u.Ref)
	}
	return b.Bytes()
}

// environ is the environment of a push's scripts: the platform's
// variables, GIT_DIR, and the variables through which git reads a git
// push's objects before they are accepted (its quarantine).
func (s *Service) environ(ctx context.Context, push *githost.Push) ([]string, error) {
	env := []string{
		"PATH=" + os.Getenv("PATH"),
		"HOME=" + os.TempDir(),
		"LANG=C.UTF-8",
		"GIT_DIR=" + s.Repos.GitDir(push.Repo.ID),
		"GITHUB_REPO_NAME=" + push.Repo.FullName(),
		"GITHUB_REPO_PUBLIC=" + strconv.FormatBool(!push.Repo.Private),
	}
	if push.Pusher != nil {
		env = append(env, "GITHUB_USER_LOGIN="+push.Pusher.Login)
	}
	if push.ByServer {
		env = append(env, "GITHUB_VIA=api")
	}
	if q, ok := push.Inspect.(interface{ Environ() []string }); ok {
		env = append(env, q.Environ()...)
	}
	if push.Intent.Kind == protection.MergeIntent {
		pr, err := pullRequestVars(ctx, s.DB, push)
		if err != nil {
			return nil, err
		}
		env = append(env, pr...)
	}
	return env, nil
}

// pullRequestVars are GITHUB_PULL_REQUEST_HEAD and _BASE of a pull
// request's merge: "owner:branch" of its head (the branch alone when the
// head repository is gone) and of its base, as the platform sets them.
func pullRequestVars(ctx context.Context, q store.Q, push *githost.Push) ([]string, error) {
	number, err := strconv.ParseInt(push.Intent.Subject, 10, 64)
	if err != nil {
		return nil, nil
	}
	var headRef, baseRef, headOwner string
	err = q.QueryRowContext(ctx, `SELECT pr.head_ref, pr.base_ref, COALESCE(a.login, '') FROM pull_requests pr
		LEFT JOIN repositories r ON r.id = pr.head_repository_id LEFT JOIN accounts a ON a.id = r.owner_id
		WHERE pr.repository_id = $1 AND pr.number = $2`, push.Repo.ID, number).Scan(&headRef, &baseRef, &headOwner)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	head := headRef
	if headOwner != "" {
		head = headOwner + ":" + headRef
	}
	return []string{"GITHUB_PULL_REQUEST_HEAD=" + head, "GITHUB_PULL_REQUEST_BASE=" + push.Repo.Owner.Login + ":" + baseRef}, nil
}

// run runs the hook's script with env and stdin. It returns the script's
// output and nil when it exited 0; otherwise the reason (exit status,
// timeout, could not start). An error matching errInternal is the
// server's own failure.
func (s *Service) run(ctx context.Context, h *Hook, env []string, stdin []byte) (string, error) {
	script, err := s.readScript(ctx, h)
	if err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp("", "forgeapi-pre-receive-")
	if err != nil {
		return "", fmt.Errorf("%w: %v", errInternal, err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "hook")
	if err := os.WriteFile(path, script, 0o700); err != nil {
		return "", fmt.Errorf("%w: %v", errInternal, err)
	}
	timeout := s.Timeout
	if timeout <= 0 {
		timeout = DefaultTimeout
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := &limitedBuffer{max: maxOutput}
	err = runScript(ctx, path, dir, env, stdin, out)
	switch {
	case err == nil:
		return out.String(), nil
	case ctx.Err() != nil:
		return out.String(), fmt.Errorf("pre-receive hook %q timed out after %s", h.Name, timeout)
	default:
		return out.String(), fmt.Errorf("pre-receive hook %q failed: %v", h.Name, err)
	}
}

// runScript runs the script file at path in dir. A file just written may
// be held open for writing by a fork of another goroutine for a moment
// (ETXTBSY): the start is tried again then.
func runScript(ctx context.Context, path, dir string, env []string, stdin []byte, out io.Writer) error {
	for attempt := 0; ; attempt++ {
		cmd := exec.CommandContext(ctx, path)
		cmd.Dir, cmd.Env, cmd.Stdin = dir, env, bytes.NewReader(stdin)
		cmd.Stdout, cmd.Stderr = out, out
		cmd.WaitDelay = time.Second
		err := cmd.Run()
		if !errors.Is(err, syscall.ETXTBSY) || attempt == 20 {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// readScript reads the hook's script from the default branch of its
// repository. A script that is not there any more is the hook's failure
// (an enabled hook then refuses pushes), not the server's.
func (s *Service) readScript(ctx context.Context, h *Hook) ([]byte, error) {
	repo, err := repos.ByID(ctx, s.DB, h.RepoID)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInternal, err)
	}
	script, err := readFile(s.Repos.GitDir(repo.ID), repo.DefaultBranch, h.Script)
	if errors.Is(err, errNoScript) {
		return nil, fmt.Errorf("pre-receive hook %q: script %s not found in %s", h.Name, h.Script, repo.FullName())
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errInternal, err)
	}
	return script, nil
}

// errNoScript is a script path with no file at the branch.
var errNoScript = errors.New("no such script")

// readFile reads path at the branch of the repository at dir.
func readFile(dir, branch, path string) ([]byte, error) {
	g, err := gitread.Open(dir)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	b, err := g.ReadFile("refs/heads/"+branch, path)
	if errors.Is(err, gitread.ErrRevisionNotFound) || errors.Is(err, gitread.ErrPathNotFound) || errors.Is(err, gitread.ErrNotAFile) ||
		errors.Is(err, store.ErrNotFound) {
		return nil, errNoScript
	}
	return b, err
}

// limitedBuffer keeps the first max bytes written to it.
type limitedBuffer struct {
	buf bytes.Buffer
	max int
}

func (b *limitedBuffer) Write(p []byte) (int, error) {
	if room := b.max - b.buf.Len(); room > 0 {
		b.buf.Write(p[:min(len(p), room)])
	}
	return len(p), nil
}

func (b *limitedBuffer) String() string { return b.buf.String() }
