package githttp

import (
	"context"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"
)

// StreamRequest is one git service run over a byte stream rather than
// HTTP (an SSH session's channel): the client's half of git's protocol on
// Stdin, git's on Stdout, git's own messages on Stderr. Its Request's
// RepoDir, RemoteUser, PushID, PreReceive and PostReceive mean what they
// mean over HTTP (SubPath is unused): a push over a stream runs the same
// hooks, callbacks, checks and limits as one over HTTP.
type StreamRequest struct {
	Request
	Service Service
	// Protocol is the client's GIT_PROTOCOL ("version=2"), "" for none.
	Protocol string
	Stdin    io.Reader
	Stdout   io.Writer
	Stderr   io.Writer
}

// ErrBusy means every git process slot stayed taken for QueueWait; its
// message is what a git client should be told.
var ErrBusy = errors.New(busyMessage)

// ErrNoRepository means the request's RepoDir is not a repository.
var ErrNoRepository = errors.New("repository not found")

// ServeStream runs git-upload-pack, git-receive-pack or
// git-upload-archive for req.RepoDir
// over req's streams, in one of the Server's process slots, and returns
// git's exit status. The caller must have authenticated and authorised
// it. It fails before git runs with ErrBusy, ErrNoRepository or an
// internal error (logged; the client should be told no more). git runs
// in its own process group, killed when ctx ends or git exits, and by the
// kernel if the server dies.
func (s *Server) ServeStream(ctx context.Context, req StreamRequest) (int, error) {
	if req.Service != ServiceUploadPack && req.Service != ServiceReceivePack && req.Service != ServiceUploadArchive {
		return 0, ErrUnsupportedRequest
	}
	dir, err := filepath.Abs(req.RepoDir)
	if err != nil || !isRepository(dir) {
		return 0, ErrNoRepository
	}
	req.RepoDir = dir
	release, ok := s.acquireSlot(ctx)
	if !ok {
		return 0, ErrBusy
	}
	defer release()
	var hook *hookChannel
	if req.Service == ServiceReceivePack {
		note, err := s.notePush(req.RepoDir)
		if err != nil {
			s.logger.ErrorContext(ctx, "githttp: note push", "repo", req.RepoDir, "err", err)
			return 0, err
		}
		defer note.done()
		if req.PreReceive != nil || req.PostReceive != nil {
			if hook, err = openHookChannel(); err != nil {
				s.logger.ErrorContext(ctx, "githttp: open hook channel", "repo", req.RepoDir, "err", err)
				return 0, err
			}
			defer hook.close()
			hook.serve(s.hookAnswerer(ctx, req.Request))
		}
	}
	return s.runStream(ctx, req, hook)
}

// runStream runs the service's git command with the request's streams.
func (s *Server) runStream(ctx context.Context, req StreamRequest, hook *hookChannel) (int, error) {
	cmd := exec.CommandContext(ctx, s.gitPath, string(req.Service[len("git-"):]), req.RepoDir)
	cmd.Dir = req.RepoDir
	cmd.Env = append([]string{"PATH=" + os.Getenv("PATH"), "GIT_CONFIG_NOSYSTEM=1", "REMOTE_USER=" + req.RemoteUser},
		s.serviceEnv(req.Service, req.Request, hook != nil)...)
	if req.Protocol != "" && gitProtocolValue.MatchString(req.Protocol) {
		cmd.Env = append(cmd.Env, "GIT_PROTOCOL="+req.Protocol)
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
	cmd.Cancel = func() error { return killGroup(cmd.Process.Pid) }
	cmd.WaitDelay = 5 * time.Second
	cmd.Stderr = req.Stderr
	if hook != nil {
		cmd.ExtraFiles = hook.childEnds()
	}
	stdin, err := cmd.StdinPipe()
	var stdout io.ReadCloser
	if err == nil {
		stdout, err = cmd.StdoutPipe()
	}
	if err == nil {
		err = cmd.Start()
	}
	if hook != nil {
		hook.closeChildEnds() // git holds them now; their closing tells the hooks the server is gone
	}
	if err != nil {
		s.logger.ErrorContext(ctx, "githttp: start git", "repo", req.RepoDir, "service", req.Service, "err", err)
		return 0, err
	}
	// The client's input goes to git until either ends; the copy is not
	// waited for: the caller closes the stream, which ends it.
	go func() {
		_, _ = io.Copy(stdin, req.Stdin)
		_ = stdin.Close()
	}()
	_, _ = io.Copy(req.Stdout, stdout) // to git's end, or the client's
	// Whatever is left of git's processes goes now. The group is not
	// empty (git is not reaped yet), so its id cannot have been reused.
	_ = killGroup(cmd.Process.Pid)
	err = cmd.Wait()
	var exit *exec.ExitError
	if errors.As(err, &exit) {
		return exit.ExitCode(), nil
	}
	return 0, err
}
