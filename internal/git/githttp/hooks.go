package githttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
)

// RefusalError is an error whose message the git client may see. Create it
// with Refuse.
type RefusalError struct {
	Message string
	// APIMessage, when set, is what an API client whose change the
	// server pushes (githost.ServerPush) is told instead of Message.
	APIMessage string
}

func (e *RefusalError) Error() string { return e.Message }

// Refuse returns an error that, returned from a PreReceiveFunc, rejects the
// push and shows the formatted message to the git client as
// "remote: <message>" (one line per line of the message).
func Refuse(format string, args ...any) error {
	return &RefusalError{Message: fmt.Sprintf(format, args...)}
}

// Messages shown to the git client when a callback fails for a reason it
// must not see.
const (
	preReceiveFailedMessage  = "push rejected: internal server error while checking the push"
	postReceiveFailedMessage = "warning: the push was accepted but the server failed to record it"
)

// WriteRefusal answers a git HTTP request with status and a plain text body.
// Git prints such a body as "remote: <message>" before its own error line,
// so message should say what is wrong ("repository is locked for
// migration"); it must not carry internal error text.
func WriteRefusal(w http.ResponseWriter, status int, message string) {
	h := w.Header()
	h.Set("Content-Type", "text/plain; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(status)
	_, _ = fmt.Fprintln(w, strings.TrimRight(message, "\n"))
}

// hookAnswerer returns the function that answers the hook calls of one push.
func (s *Server) hookAnswerer(ctx context.Context, req Request) func(hookCall) verdict {
	return func(call hookCall) verdict {
		switch call.name {
		case hookPreReceive:
			return s.preReceive(ctx, req, call)
		case hookPostReceive:
			return s.postReceive(context.WithoutCancel(ctx), req, call)
		default:
			s.logger.ErrorContext(ctx, "githttp: unknown hook", "repo", req.RepoDir, "hook", call.name)
			return verdict{accept: false}
		}
	}
}

func (s *Server) preReceive(ctx context.Context, req Request, call hookCall) verdict {
	if req.PreReceive == nil {
		return verdict{accept: true}
	}
	inspector := newQuarantineInspector(s.gitPath, req.RepoDir, call.env)
	err := req.PreReceive(ctx, call.updates, inspector)
	if err == nil {
		return verdict{accept: true}
	}
	if refusal, ok := errors.AsType[*RefusalError](err); ok {
		return verdict{lines: []string{refusal.Message}}
	}
	s.logger.ErrorContext(ctx, "githttp: pre-receive callback", "repo", req.RepoDir, "err", err)
	return verdict{lines: []string{preReceiveFailedMessage}}
}

func (s *Server) postReceive(ctx context.Context, req Request, call hookCall) verdict {
	if req.PostReceive == nil {
		return verdict{accept: true}
	}
	if err := req.PostReceive(ctx, call.updates); err != nil {
		s.logger.ErrorContext(ctx, "githttp: post-receive callback", "repo", req.RepoDir, "err", err)
		return verdict{lines: []string{postReceiveFailedMessage}, accept: true}
	}
	return verdict{accept: true}
}
