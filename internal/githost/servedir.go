package githost

import (
	"context"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/httpapi"
)

// DirTarget is a bare git repository that is not one of the repositories
// table (a gist), as an area's DirAccess resolves it for ServeDir.
type DirTarget struct {
	// Dir is the bare repository's directory.
	Dir string
	// PreReceive and PostReceive, when set, run around a push's
	// reference updates (see githttp.Request).
	PreReceive  githttp.PreReceiveFunc
	PostReceive githttp.PostReceiveFunc
}

// DirAccess resolves the repository of a ServeDir request for the
// authenticated (or anonymous) principal and the service it asks for. It
// returns an *apierr.Error to refuse: 401 asks for credentials, 404 is
// "not found" (and asks an anonymous caller for credentials), anything
// else is printed by git as the server's message.
type DirAccess func(ctx context.Context, p *auth.Principal, service githttp.Service) (DirTarget, error)

// ServeDir serves one git smart HTTP request for a bare repository that
// an area owns outside the repositories table, subPath being the path
// below it ("/info/refs", "/git-upload-pack", "/git-receive-pack"). The
// request passes through the same authentication as a repository's
// (refused credentials charge the anonymous rate limit, a password of an
// account with two-factor authentication is refused), and access answers
// who may do what; the git process and its limits are the repositories'.
func (h *Handler) ServeDir(w http.ResponseWriter, r *http.Request, subPath string, access DirAccess) {
	ctx := r.Context()
	service, err := githttp.RequestedService(r, subPath)
	if err != nil {
		githttp.WriteRefusal(w, http.StatusForbidden, "Only the smart HTTP protocol is supported.")
		return
	}
	p, err := h.Authn.Authenticate(ctx, r)
	if err != nil {
		h.refuseCredentials(w, r, err)
		return
	}
	httpapi.NotePrincipal(w, p)
	if err := h.passwordRefusal(ctx, p); err != nil {
		h.refuse(w, p, err)
		return
	}
	t, err := access(ctx, p, service)
	if err != nil {
		h.refuse(w, p, err)
		return
	}
	remoteUser := ""
	if !p.Anonymous() {
		remoteUser = p.Account.Login
	}
	h.Git.ServeGit(w, r, githttp.Request{RepoDir: t.Dir, SubPath: subPath, RemoteUser: remoteUser,
		PreReceive: t.PreReceive, PostReceive: t.PostReceive})
}

// passwordRefusal refuses git over HTTP with the password of an account
// that has two-factor authentication on, as authorize does for
// repositories: such a user's git client must send a token.
func (h *Handler) passwordRefusal(ctx context.Context, p *auth.Principal) error {
	if p.Method != auth.MethodPassword {
		return nil
	}
	u, err := accounts.ByID(ctx, h.DB, p.Account.ID)
	if err != nil {
		return err
	}
	if u.HasTOTP {
		return apierr.Unauthorized("Two-factor authentication is on for this account: use a personal access token as the password.")
	}
	return nil
}
