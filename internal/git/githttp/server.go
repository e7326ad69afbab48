// Package githttp serves git's smart HTTP protocol (clone, fetch, shallow
// fetch, push; protocol v0, v1 and v2) for bare repositories by running
// `git http-backend` as a CGI program (see backend.go: request bodies of
// any length, chunked or gzip-encoded, are streamed to git), and lets the
// caller check a push before its references move (PreReceive) and record
// it after they moved (PostReceive). ServeStream runs the same services
// over a byte stream (git over SSH) with the same hooks, callbacks and
// limits.
//
// Hooks: Init installs pre-receive and post-receive hooks, tiny sh scripts.
// For each push the Server passes two pipes to http-backend as descriptors
// 3 and 4, which git hands down to the hooks; the hooks write their input
// to one and wait for the Server's verdict on the other, which the Server
// computes by calling the Request's callbacks in the request's goroutine
// tree. Pushes made outside the Server (no FORGEAPI_HOOK_FDS) are accepted
// by the hooks without a word.
//
// Limits: a push's pack is bounded by Config.MaxPushSize; the git requests
// served at once by Config.MaxProcesses (beyond it requests wait up to
// Config.QueueWait, then get 503 with Retry-After).
//
// Authentication and authorisation are the caller's: it decides, before
// calling ServeGit, whether the user may read (ServiceUploadPack) or write
// (ServiceReceivePack), using RequestedService, and answers refusals with
// WriteRefusal, whose text the git client prints.
package githttp

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"forgeapi/internal/git/gitcmd"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"
)

// Service is the git service a request asks for.
type Service string

// The git services of the smart HTTP protocol.
const (
	ServiceUploadPack  Service = "git-upload-pack"  // clone and fetch: needs read access
	ServiceReceivePack Service = "git-receive-pack" // push: needs write access
	// ServiceUploadArchive is `git archive --remote`: needs read access.
	// It is served over streams (ServeStream) only, as the platform
	// serves it over SSH only.
	ServiceUploadArchive Service = "git-upload-archive"
)

// ErrUnsupportedRequest means a request is not part of the smart HTTP
// protocol (for example a dumb HTTP object fetch) or uses the wrong method.
var ErrUnsupportedRequest = errors.New("githttp: unsupported request")

// RequestedService returns the service that a request for subPath (the path
// below the repository, such as "/info/refs") asks for, so the caller can
// check read or write access before ServeGit. It fails with
// ErrUnsupportedRequest for anything but the three smart HTTP endpoints.
func RequestedService(r *http.Request, subPath string) (Service, error) {
	switch {
	case subPath == "/info/refs" && (r.Method == http.MethodGet || r.Method == http.MethodHead):
		switch s := Service(r.URL.Query().Get("service")); s {
		case ServiceUploadPack, ServiceReceivePack:
			return s, nil
		}
	case subPath == "/"+string(ServiceUploadPack) && r.Method == http.MethodPost:
		return ServiceUploadPack, nil
	case subPath == "/"+string(ServiceReceivePack) && r.Method == http.MethodPost:
		return ServiceReceivePack, nil
	}
	return "", ErrUnsupportedRequest
}

// DefaultMaxPushSize is the default bound of a push's pack: 2 GiB, the
// platform's push limit.
const DefaultMaxPushSize = 2 << 30

// DefaultQueueWait is how long a request waits for a git process slot by
// default before it is refused with 503.
const DefaultQueueWait = 10 * time.Second

// DefaultMaxProcesses is the default bound on concurrent git requests:
// four per CPU, at least 8. Fetches are CPU-bound in pack-objects, pushes
// mostly wait on the client, so a few per CPU keep the CPUs busy.
func DefaultMaxProcesses() int { return max(8, 4*runtime.NumCPU()) }

// Config configures a Server. The zero value is usable.
type Config struct {
	// GitPath is the git binary, looked up in PATH when it has no slash.
	// Default "git".
	GitPath string
	// Logger receives errors of git and of the callbacks. Default slog.Default().
	Logger *slog.Logger
	// MaxPushSize bounds the size of the pack of one push, counted as git
	// receives it (after any gzip Content-Encoding is undone): a larger
	// push is refused by git with "pack exceeds maximum allowed size
	// (<limit>)", which the client shows as a remote: line. 0 means
	// DefaultMaxPushSize; a negative value means no limit.
	MaxPushSize int64
	// MaxProcesses bounds the git requests served at once (each runs
	// `git http-backend` and its children). 0 means DefaultMaxProcesses();
	// a negative value means no bound.
	MaxProcesses int
	// QueueWait is how long a request beyond MaxProcesses waits for a
	// slot before it is refused with 503 and Retry-After. 0 means
	// DefaultQueueWait.
	QueueWait time.Duration
	// StateDir is where the Server notes the pushes it serves, so that
	// RemoveStale can clean up after a crash. Empty: no notes, and
	// RemoveStale does nothing.
	StateDir string
	// IdleTimeout ends a response whose client reads nothing for that
	// long (a write that cannot complete). 0 means no timeout.
	IdleTimeout time.Duration
}

// Server serves git smart HTTP for bare repositories. It is safe for
// concurrent use, including concurrent pushes to one repository: each push
// gets its own hook channel.
type Server struct {
	gitPath     string
	backendPath func() []string // the command that runs http-backend, found once
	logger      *slog.Logger
	maxPushSize int64
	slots       chan struct{} // nil: no bound
	queueWait   time.Duration
	idleTimeout time.Duration
	stateDir    string
}

// NewServer returns a Server for cfg. It fails when the git binary is not found.
func NewServer(cfg Config) (*Server, error) {
	if cfg.GitPath == "" {
		cfg.GitPath = "git"
	}
	gitPath, err := exec.LookPath(cfg.GitPath)
	if err != nil {
		return nil, fmt.Errorf("githttp: git binary: %w", err)
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.Default()
	}
	if cfg.MaxPushSize == 0 {
		cfg.MaxPushSize = DefaultMaxPushSize
	}
	if cfg.MaxProcesses == 0 {
		cfg.MaxProcesses = DefaultMaxProcesses()
	}
	if cfg.QueueWait <= 0 {
		cfg.QueueWait = DefaultQueueWait
	}
	s := &Server{gitPath: gitPath, logger: cfg.Logger, maxPushSize: cfg.MaxPushSize,
		queueWait: cfg.QueueWait, idleTimeout: cfg.IdleTimeout, stateDir: cfg.StateDir}
	s.backendPath = sync.OnceValue(func() []string { return httpBackendCommand(gitPath) })
	if s.stateDir != "" {
		if err := os.MkdirAll(s.stateDir, 0o700); err != nil {
			return nil, fmt.Errorf("githttp: state directory: %w", err)
		}
	}
	if cfg.MaxProcesses > 0 {
		s.slots = make(chan struct{}, cfg.MaxProcesses)
	}
	return s, nil
}

// httpBackendCommand is the command line that runs `git http-backend`:
// the git-http-backend program in git's exec path when there is one (the
// git wrapper would only start it, one process more on every request),
// else git itself with the subcommand.
func httpBackendCommand(gitPath string) []string {
	dir, err := gitcmd.Git{Binary: gitPath}.Text(context.Background(), nil, "--exec-path")
	if err == nil {
		backend := filepath.Join(dir, "git-http-backend")
		if info, err := os.Stat(backend); err == nil && info.Mode().IsRegular() && info.Mode()&0o111 != 0 {
			return []string{backend}
		}
	}
	return []string{gitPath, "http-backend"}
}

// PreReceiveFunc checks a push after its objects arrived and before any
// reference moves. Returning nil accepts all updates; returning an error
// rejects them all. The message of an error made by Refuse is shown to the
// git client; any other error is logged and the client sees a generic
// message. ctx ends when the request does.
type PreReceiveFunc func(ctx context.Context, updates []RefUpdate, inspect Inspector) error

// PostReceiveFunc is told about the updates that were applied, after the
// references moved and before the git client gets its final answer (so
// when `git push` returns, it has returned). Its ctx is not cancelled when
// the client disconnects, since the references have moved already. An error
// cannot undo the push: it is logged and the client is warned generically.
type PostReceiveFunc func(ctx context.Context, updates []RefUpdate) error

// Request describes one git HTTP request for ServeGit.
type Request struct {
	// RepoDir is the bare repository's directory.
	RepoDir string
	// SubPath is the path below the repository: "/info/refs",
	// "/git-upload-pack" or "/git-receive-pack".
	SubPath string
	// RemoteUser is the authenticated user's login ("" for anonymous); git
	// records it in reflogs and passes it to hooks as REMOTE_USER.
	RemoteUser string
	// PushID, when not empty, names a push (POST git-receive-pack) in
	// git's reflogs: receive-pack writes every reference update it
	// applies to the reference's reflog with PushID as the committer
	// email, whatever the repository's core.logAllRefUpdates, so that the
	// caller can tell later which updates of the push git applied (see
	// gitread.RefLog). It must be a valid email address local part and
	// domain without "<", ">" or spaces ("push-<id>@host"); another
	// value is not passed to git.
	PushID string
	// PreReceive and PostReceive may be nil.
	PreReceive  PreReceiveFunc
	PostReceive PostReceiveFunc
}

// ServeGit serves one smart HTTP request for req.RepoDir. The caller must
// have authenticated and authorised it. Requests outside the smart protocol
// get 404 (405 for a wrong method), a missing repository 404 and a POST
// whose body cannot be a git request 400, with a text the git client
// prints. A relative RepoDir is taken from the process's working directory
// (git runs inside the repository, where it would no longer resolve).
func (s *Server) ServeGit(w http.ResponseWriter, r *http.Request, req Request) {
	service, err := RequestedService(r, req.SubPath)
	if err != nil {
		s.refuseUnsupported(w, r, req.SubPath)
		return
	}
	if req.RepoDir, err = filepath.Abs(req.RepoDir); err != nil {
		s.logger.ErrorContext(r.Context(), "githttp: repository directory", "repo", req.RepoDir, "err", err)
		WriteRefusal(w, http.StatusInternalServerError, "internal server error")
		return
	}
	if !isRepository(req.RepoDir) {
		WriteRefusal(w, http.StatusNotFound, "repository not found")
		return
	}
	if r.Method == http.MethodPost {
		if msg := checkRequestBody(r, service); msg != "" {
			WriteRefusal(w, http.StatusBadRequest, msg)
			return
		}
	}
	if service == ServiceUploadPack && r.Method == http.MethodPost {
		// A slow client sends its negotiation to a goroutine, not to a git process.
		if err := prefetchBody(r, maxPrefetch); err != nil {
			return // the client went away or stalled
		}
	}
	release, ok := s.acquireSlot(r.Context())
	if !ok {
		if r.Context().Err() == nil {
			w.Header().Set("Retry-After", strconv.Itoa(s.retryAfterSeconds()))
			WriteRefusal(w, http.StatusServiceUnavailable, busyMessage)
		}
		return
	}
	defer release()
	call := &backendCall{s: s, w: w, r: r, req: req, service: service}
	if service == ServiceReceivePack && r.Method == http.MethodPost {
		note, err := s.notePush(req.RepoDir)
		if err != nil {
			s.logger.ErrorContext(r.Context(), "githttp: note push", "repo", req.RepoDir, "err", err)
			WriteRefusal(w, http.StatusInternalServerError, "internal server error")
			return
		}
		defer note.done()
	}
	if service == ServiceReceivePack && r.Method == http.MethodPost && (req.PreReceive != nil || req.PostReceive != nil) {
		if call.hook, err = openHookChannel(); err != nil {
			s.logger.ErrorContext(r.Context(), "githttp: open hook channel", "repo", req.RepoDir, "err", err)
			WriteRefusal(w, http.StatusInternalServerError, "internal server error")
			return
		}
		defer call.hook.close()
		call.hook.serve(s.hookAnswerer(r.Context(), req))
	}
	call.run()
}

// maxPrefetch bounds the fetch negotiation read before a git process
// slot is taken; a larger body streams to git (which buffers it anyway,
// up to GIT_HTTP_MAX_REQUEST_BUFFER).
const maxPrefetch = 1 << 20

// prefetchBody reads r.Body into memory up to limit bytes, and replaces
// it with a reader of what it read and of the rest. It fails when reading
// fails (the client went away, or stalled past the idle timeout).
func prefetchBody(r *http.Request, limit int64) error {
	var buf bytes.Buffer
	if _, err := buf.ReadFrom(io.LimitReader(r.Body, limit)); err != nil {
		return err
	}
	rest := r.Body
	r.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(&buf, rest), rest}
	return nil
}

// busyMessage is what a git client prints when every git process slot
// stayed taken for QueueWait.
const busyMessage = "the server is busy serving other git requests; try again in a moment"

// acquireSlot waits up to QueueWait for one of the MaxProcesses slots and
// returns the function that frees it. It fails when the wait ends, or
// when ctx does.
func (s *Server) acquireSlot(ctx context.Context) (release func(), ok bool) {
	if s.slots == nil {
		return func() {}, true
	}
	release = func() { <-s.slots }
	select {
	case s.slots <- struct{}{}:
		return release, true
	default:
	}
	timer := time.NewTimer(s.queueWait)
	defer timer.Stop()
	select {
	case s.slots <- struct{}{}:
		return release, true
	case <-timer.C:
		return nil, false
	case <-ctx.Done():
		return nil, false
	}
}

// retryAfterSeconds is the Retry-After of a busy answer: the queue wait.
func (s *Server) retryAfterSeconds() int {
	return max(1, int((s.queueWait+time.Second-1)/time.Second))
}

func (s *Server) refuseUnsupported(w http.ResponseWriter, r *http.Request, subPath string) {
	isGet := r.Method == http.MethodGet || r.Method == http.MethodHead
	switch {
	case subPath == "/info/refs" && isGet && r.URL.Query().Get("service") == "":
		WriteRefusal(w, http.StatusForbidden, "dumb HTTP protocol is not supported; use a smart git client")
	case subPath == "/info/refs" && isGet:
		WriteRefusal(w, http.StatusForbidden, "unsupported git service")
	case subPath == "/info/refs" || subPath == "/"+string(ServiceUploadPack) || subPath == "/"+string(ServiceReceivePack):
		WriteRefusal(w, http.StatusMethodNotAllowed, "method not allowed")
	default:
		WriteRefusal(w, http.StatusNotFound, "not found")
	}
}

// gitProtocolValue matches what git sends in the Git-Protocol header
// ("version=2", colon-separated key[=value] pairs).
var gitProtocolValue = regexp.MustCompile(`^[A-Za-z0-9._=:-]{1,256}$`)

// pushIDValue matches the Request.PushID values ServeGit passes to git.
var pushIDValue = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,128}@[A-Za-z0-9.-]{1,128}$`)

// isRepository reports whether dir looks like a bare git repository.
func isRepository(dir string) bool {
	if dir == "" {
		return false
	}
	info, err := os.Stat(filepath.Join(dir, "objects"))
	if err != nil || !info.IsDir() {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, "HEAD"))
	return err == nil
}

// stderrLogger logs what http-backend and its children write to stderr.
type stderrLogger struct {
	logger  *slog.Logger
	repoDir string
}

func (l *stderrLogger) Write(p []byte) (int, error) {
	if msg := strings.TrimSpace(string(p)); msg != "" {
		l.logger.Warn("githttp: git http-backend", "repo", l.repoDir, "stderr", msg)
	}
	return len(p), nil
}
