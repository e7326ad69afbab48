// Package githttp serves git's smart HTTP protocol (clone, fetch, shallow
// fetch, push; protocol v0, v1 and v2) for bare repositories by running
// `git http-backend` as a CGI program, and lets the caller check a push
// before its references move (PreReceive) and record it after they moved
// (PostReceive).
//
// Hooks: Init installs pre-receive and post-receive hooks, tiny sh scripts.
// For each push the Server creates a private directory with two FIFOs and
// passes it to http-backend in FORGEAPI_HOOK_DIR; the hooks write their
// input there and wait for the Server's verdict, which the Server computes
// by calling the Request's callbacks in the request's goroutine tree. Pushes
// made outside the Server (no FORGEAPI_HOOK_DIR) are accepted by the hooks
// without a word.
//
// Authentication and authorisation are the caller's: it decides, before
// calling ServeGit, whether the user may read (ServiceUploadPack) or write
// (ServiceReceivePack), using RequestedService, and answers refusals with
// WriteRefusal, whose text the git client prints.
package githttp

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/cgi"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
)

// Service is the git service a request asks for.
type Service string

// The git services of the smart HTTP protocol.
const (
	ServiceUploadPack  Service = "git-upload-pack"  // clone and fetch: needs read access
	ServiceReceivePack Service = "git-receive-pack" // push: needs write access
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

// Config configures a Server. The zero value is usable.
type Config struct {
	// GitPath is the git binary, looked up in PATH when it has no slash.
	// Default "git".
	GitPath string
	// Logger receives errors of git and of the callbacks. Default slog.Default().
	Logger *slog.Logger
	// TempDir is where per-push hook channels are created. Default os.TempDir().
	TempDir string
}

// Server serves git smart HTTP for bare repositories. It is safe for
// concurrent use, including concurrent pushes to one repository: each push
// gets its own hook channel.
type Server struct {
	gitPath string
	logger  *slog.Logger
	tempDir string
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
	if cfg.TempDir == "" {
		cfg.TempDir = os.TempDir()
	}
	return &Server{gitPath: gitPath, logger: cfg.Logger, tempDir: cfg.TempDir}, nil
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
	env := s.cgiEnv(r, req)
	if service == ServiceReceivePack && r.Method == http.MethodPost && (req.PreReceive != nil || req.PostReceive != nil) {
		ch, err := openHookChannel(s.tempDir)
		if err != nil {
			s.logger.ErrorContext(r.Context(), "githttp: open hook channel", "repo", req.RepoDir, "err", err)
			WriteRefusal(w, http.StatusInternalServerError, "internal server error")
			return
		}
		defer ch.close()
		ch.serve(s.hookAnswerer(r.Context(), req))
		env = append(env, hookDirEnv+"="+ch.dir)
	}
	s.backend(req.RepoDir, env).ServeHTTP(w, backendRequest(r, req.SubPath))
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

// backend is the CGI handler running `git http-backend` on repoDir.
func (s *Server) backend(repoDir string, env []string) *cgi.Handler {
	return &cgi.Handler{
		Path:       s.gitPath,
		Args:       []string{"http-backend"},
		Root:       "/",
		Dir:        repoDir,
		Env:        env,
		InheritEnv: []string{"PATH"},
		Logger:     slog.NewLogLogger(s.logger.Handler(), slog.LevelError),
		Stderr:     &stderrLogger{logger: s.logger, repoDir: repoDir},
	}
}

// cgiEnv is the environment of http-backend for req.
func (s *Server) cgiEnv(r *http.Request, req Request) []string {
	env := []string{
		"GIT_PROJECT_ROOT=" + req.RepoDir,
		"GIT_HTTP_EXPORT_ALL=1",
		"GIT_CONFIG_NOSYSTEM=1",
		"REMOTE_USER=" + req.RemoteUser,
	}
	if p := r.Header.Get("Git-Protocol"); p != "" && gitProtocolValue.MatchString(p) {
		env = append(env, "GIT_PROTOCOL="+p)
	}
	if req.PushID != "" && pushIDValue.MatchString(req.PushID) {
		env = append(env, "GIT_COMMITTER_EMAIL="+req.PushID,
			"GIT_CONFIG_COUNT=1", "GIT_CONFIG_KEY_0=core.logAllRefUpdates", "GIT_CONFIG_VALUE_0=always")
	}
	return env
}

// gitProtocolValue matches what git sends in the Git-Protocol header
// ("version=2", colon-separated key[=value] pairs).
var gitProtocolValue = regexp.MustCompile(`^[A-Za-z0-9._=:-]{1,256}$`)

// pushIDValue matches the Request.PushID values ServeGit passes to git.
var pushIDValue = regexp.MustCompile(`^[A-Za-z0-9._+-]{1,128}@[A-Za-z0-9.-]{1,128}$`)

// backendRequest rewrites r for the CGI handler: the path becomes the
// sub-path (PATH_INFO) and credentials are dropped, since every header would
// otherwise reach http-backend's and the hooks' environment.
func backendRequest(r *http.Request, subPath string) *http.Request {
	br := r.Clone(r.Context())
	br.URL.Path, br.URL.RawPath = subPath, ""
	for _, h := range []string{"Authorization", "Cookie", "Proxy-Authorization"} {
		br.Header.Del(h)
	}
	return br
}

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
