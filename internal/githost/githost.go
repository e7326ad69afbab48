// Package githost serves forgeapi's repositories over git's smart HTTP
// protocol at {base}/{owner}/{repo}.git, and over streams (git over SSH:
// ServeStream, with the same authorisation, checks and recording): it
// authenticates the git client
// (HTTP Basic with a password or any token), checks read or write access
// as the API does, refuses pushes to repositories locked for migration,
// runs the pre-receive checks other areas register, and records every
// accepted push as domain events in one transaction. A push is logged in
// the push_log table before its references move, so that its events
// survive a crash between the move and their transaction (see Recoverer).
// Pushes are counted per repository, and the Maintainer runs git gc on
// repositories once enough pushes or time accumulated.
package githost

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"sync"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Push is a push under examination by a PushCheck, or recorded (an
// IntentHandler's; Inspect nil).
type Push struct {
	Repo    *repos.Repository
	Pusher  *accounts.Account
	Updates []githttp.RefUpdate
	Inspect githttp.Inspector
	// Intent is the server push's intent (a pull request's merge), zero
	// for a git push and a plain server push.
	Intent PushIntent
	// ByServer marks a server push (the API's changes), not a git push.
	ByServer bool
}

// PushCheck may veto a push before any reference moves. An error made by
// githttp.Refuse is shown to the git client; the push changes nothing.
type PushCheck func(ctx context.Context, push *Push) error

// Handler serves git over HTTP.
type Handler struct {
	DB     *store.DB
	Repos  *repos.Service
	Authn  *auth.Authenticator
	Events *events.Bus
	Git    *githttp.Server
	Logger *slog.Logger
	// BaseURL renders the URLs in push payloads.
	BaseURL string
	// SSHPort is the port git over SSH listens on (0 when off), for the
	// repository objects rendered outside a request; set with BaseURL.
	SSHPort int
	// WebFlow signs the commits the server writes itself (merges, the
	// contents API), as the platform's web-flow commits; nil signs none.
	WebFlow gitwrite.Signer
	// AuthFailed, when set, is told of every request whose credentials
	// were refused (the server charges the client address's anonymous
	// rate limit).
	AuthFailed func(r *http.Request)
	// Web, when set, serves the GET requests under /{owner}/{repo}/ that
	// are not git's (the web addresses of a repository: its diffs and
	// patches), with the path values owner, repo and rest; without it
	// they are the JSON 404.
	Web http.Handler

	checks  []PushCheck
	intents map[string]IntentHandler // by PushIntent.Kind
	// live holds the push_log ids of the pushes this process is serving
	// (from pre-receive to the end of the request); the Recoverer leaves
	// them to their postReceive.
	live sync.Map
}

// AddCheck registers a pre-receive check. Call it at start.
func (h *Handler) AddCheck(c PushCheck) { h.checks = append(h.checks, c) }

// Patterns are the routes git clients use, with and without ".git".
// The GET route is "/{owner}/{repo}/{rest...}" rather than
// ".../info/refs": the narrower pattern would collide with API routes of
// the form /a/b/{x}/{y} (GET /user/starred/{owner}/{repo} matches
// /user/starred/info/refs too), while every API route of three or more
// segments is more specific than this one and wins. ServeHTTP hands
// anything but info/refs to Handler.Web.
var Patterns = []string{
	"GET /{owner}/{repo}/{rest...}",
	"POST /{owner}/{repo}/git-upload-pack",
	"POST /{owner}/{repo}/git-receive-pack",
}

// Register adds the git routes to a mux, as streams: a push's body may
// take any time while it keeps moving (httpapi.Server.HandleStream).
func (h *Handler) Register(mux interface{ HandleStream(string, http.Handler) }) {
	for _, p := range Patterns {
		mux.HandleStream(p, h)
	}
}

// ServeHTTP authenticates and authorises one git request and serves it.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	if (r.Method == http.MethodGet || r.Method == http.MethodHead) && r.PathValue("rest") != "info/refs" {
		if h.Web != nil {
			h.Web.ServeHTTP(w, r)
			return
		}
		r.Pattern = ""
		httpapi.WriteError(w, r, apierr.NotFound())
		return
	}
	owner, name := r.PathValue("owner"), strings.TrimSuffix(r.PathValue("repo"), ".git")
	subPath := strings.TrimPrefix(r.URL.Path, "/"+r.PathValue("owner")+"/"+r.PathValue("repo"))
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
	repo, err := h.authorize(ctx, p, owner, name, service)
	if err != nil {
		h.refuse(w, p, err)
		return
	}
	remoteUser := ""
	if !p.Anonymous() {
		remoteUser = p.Account.Login
	}
	req := githttp.Request{RepoDir: h.Repos.GitDir(repo.ID), SubPath: subPath, RemoteUser: remoteUser}
	if service == githttp.ServiceUploadPack && r.Method == http.MethodPost {
		if err := h.recordFetch(ctx, r, p, repo); err != nil {
			h.refuse(w, p, err)
			return
		}
	}
	if service == githttp.ServiceReceivePack {
		push := &pushRecorder{h: h, repoID: repo.ID, principal: p, key: newPushKey()}
		req.PushID, req.PreReceive, req.PostReceive = push.key, push.preReceive, push.postReceive
		defer push.done()
	}
	h.Git.ServeGit(w, r, req)
}

// authorize returns the repository when the principal may use the
// service on it, or an *apierr.Error: 401 (ask for credentials), 404
// (hidden), 403 (visible, but not this).
func (h *Handler) authorize(ctx context.Context, p *auth.Principal, owner, name string, service githttp.Service) (*repos.Repository, error) {
	if p.Method == auth.MethodPassword {
		u, err := accounts.ByID(ctx, h.DB, p.Account.ID)
		if err != nil {
			return nil, err
		}
		if u.HasTOTP {
			return nil, apierr.Unauthorized("Two-factor authentication is on for this account: use a personal access token as the password.")
		}
	}
	repo, err := h.lookup(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	role, err := access.RepoRole(ctx, h.DB, p, repo)
	if err != nil {
		return nil, err
	}
	if p.CloneOnly() {
		return repo, authorizeClone(p, repo, role, service)
	}
	if role == auth.RoleNone {
		return nil, apierr.NotFound()
	}
	if err := access.SAMLRefusal(p, repo.Owner); err != nil {
		return nil, err
	}
	if service == githttp.ServiceUploadPack {
		if p.FineGrained() && repo.Private && !p.Token.Grant.Has(auth.Need{Name: "contents", Level: auth.Read}) {
			return nil, apierr.Forbidden("The token lacks the contents read permission on %s.", repo.FullName())
		}
		return repo, nil
	}
	return repo, h.authorizePush(p, repo, role)
}

// lookup returns the repository owner/name, or the one renamed from it
// (an old name keeps working for git); a 404 when there is none.
func (h *Handler) lookup(ctx context.Context, owner, name string) (*repos.Repository, error) {
	repo, err := repos.ByOwnerAndName(ctx, h.DB, owner, name)
	if errors.Is(err, store.ErrNotFound) {
		repo, err = repos.Renamed(ctx, h.DB, owner, name)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound()
	}
	return repo, err
}

// authorizeClone lets a clone token (a migration's temp_clone_token)
// fetch from its one repository, while its user still has admin rights
// on it; it pushes nowhere.
func authorizeClone(p *auth.Principal, repo *repos.Repository, role auth.Role, service githttp.Service) error {
	if !slices.Contains(p.Token.RepositoryIDs, repo.ID) || role < auth.RoleAdmin {
		return apierr.NotFound()
	}
	if err := access.SAMLRefusal(p, repo.Owner); err != nil {
		return err
	}
	if service != githttp.ServiceUploadPack {
		return apierr.Forbidden("Permission to %s denied to %s: a clone token is read-only.", repo.FullName(), p.Account.Login)
	}
	return nil
}

// pushPermissions are what a push needs of a permission-based token.
var pushPermissions = auth.Perm("contents:write")

func (h *Handler) authorizePush(p *auth.Principal, repo *repos.Repository, role auth.Role) error {
	if p.Anonymous() {
		return apierr.Unauthorized("Authentication is required to push.")
	}
	denied := apierr.Forbidden("Permission to %s denied to %s.", repo.FullName(), p.Account.Login)
	switch {
	case access.RepoWriteRefusal(p, repo, pushPermissions) != nil: // a token that does not select it
		return denied
	case role < auth.RoleWrite:
		return denied
	case p.ScopeBased() && !p.Token.Scopes.Grants("repo") && (repo.Private || !p.Token.Scopes.Grants("public_repo")):
		return denied
	case p.FineGrained() && !p.Token.Grant.Satisfies(pushPermissions):
		return denied
	}
	if repo.MigrationLocked {
		return errLocked
	}
	if repo.Archived {
		return errArchived
	}
	return nil
}

// refuse answers a refused git request with a message the client prints.
// Anonymous callers are asked for credentials rather than told a private
// repository exists.
func (h *Handler) refuse(w http.ResponseWriter, p *auth.Principal, err error) {
	var apiErr *apierr.Error
	if !errors.As(err, &apiErr) {
		h.Logger.Error("git request failed", "err", err)
		githttp.WriteRefusal(w, http.StatusInternalServerError, "Internal error.")
		return
	}
	switch {
	case apiErr.Status == http.StatusUnauthorized:
		challenge(w, apiErr.Message)
	case p.Anonymous() && apiErr.Status == http.StatusNotFound:
		challenge(w, "Authentication required.")
	case apiErr.Status == http.StatusNotFound:
		githttp.WriteRefusal(w, http.StatusNotFound, "Repository not found.")
	default:
		githttp.WriteRefusal(w, apiErr.Status, apiErr.Message)
	}
}

// refuseCredentials answers a request whose credentials were refused:
// wrong ones with a challenge, a login blocked after too many failed
// attempts with the 403 whose message git prints.
func (h *Handler) refuseCredentials(w http.ResponseWriter, r *http.Request, err error) {
	var apiErr *apierr.Error
	if !errors.As(err, &apiErr) {
		h.Logger.Error("git authentication failed", "err", err)
		githttp.WriteRefusal(w, http.StatusInternalServerError, "Internal error.")
		return
	}
	if h.AuthFailed != nil {
		h.AuthFailed(r)
	}
	if apiErr.Status == http.StatusForbidden {
		for k, vs := range apiErr.Header {
			w.Header()[k] = vs
		}
		githttp.WriteRefusal(w, apiErr.Status, apiErr.Message)
		return
	}
	challenge(w, "Invalid username or token.")
}

// lockedMessage is what the git client prints for a locked repository.
const lockedMessage = "repository is locked for migration"

// errLocked refuses a push to a repository locked for migration.
var errLocked = apierr.Forbidden(lockedMessage)

// archivedMessage is the platform's refusal of a push to an archived
// repository.
const archivedMessage = "This repository was archived so it is read-only."

// errArchived refuses a push to an archived repository.
var errArchived = apierr.Forbidden(archivedMessage)

func challenge(w http.ResponseWriter, message string) {
	w.Header().Set("WWW-Authenticate", `Basic realm="forgeapi"`)
	githttp.WriteRefusal(w, http.StatusUnauthorized, message)
}

// pushRecorder carries one push from pre-receive to post-receive.
type pushRecorder struct {
	h          *Handler
	repoID     int64
	principal  *auth.Principal
	key        string   // the push's name in git's reflogs (githttp.Request.PushID)
	refsBefore []string // commits the references pointed at before the push
	logID      int64    // the push's push_log row, once pre-receive accepted it
	ssh        bool     // over SSH rather than HTTP
}

// done ends the push's request: from now on the Recoverer may take its
// push_log row if postReceive did not delete it.
func (pr *pushRecorder) done() {
	if pr.logID != 0 {
		pr.h.live.Delete(pr.logID)
	}
}

func (pr *pushRecorder) preReceive(ctx context.Context, updates []githttp.RefUpdate, inspect githttp.Inspector) error {
	repo, err := repos.ByID(ctx, pr.h.DB, pr.repoID)
	if err != nil {
		return err
	}
	if repo.MigrationLocked {
		return githttp.Refuse("%s", lockedMessage)
	}
	if repo.Archived {
		return githttp.Refuse("%s", archivedMessage)
	}
	pusher, err := accounts.ByID(ctx, pr.h.DB, pr.principal.Account.ID)
	if err != nil {
		return err
	}
	for _, check := range pr.h.checks {
		if err := check(ctx, &Push{Repo: repo, Pusher: pusher, Updates: updates, Inspect: inspect}); err != nil {
			return err
		}
	}
	entry := &pushLogEntry{RepoID: repo.ID, PusherID: pusher.ID, Key: pr.key, Updates: updates}
	if err := readStateBefore(pr.h.Repos.GitDir(repo.ID), entry); err != nil {
		return err
	}
	pr.refsBefore = entry.RefsBefore
	// Committed before any reference moves: if the process dies before
	// postReceive records the events, the Recoverer does.
	if pr.logID, err = logPush(ctx, pr.h.DB, entry); err != nil {
		return err
	}
	pr.h.live.Store(pr.logID, struct{}{})
	return nil
}
