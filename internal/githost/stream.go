package githost

import (
	"context"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/repos"
)

// StreamCaller is who runs git over a stream (an SSH session): a user
// whose key authenticated, acting with the user's role on the
// repository; or a deploy key, which reaches its one repository alone.
type StreamCaller struct {
	// Principal is the key's user (Method auth.MethodSSHKey); for a
	// deploy key, the account its pushes are recorded as (who added it).
	Principal *auth.Principal
	// DeployRepoID, when not 0, makes the caller that repository's deploy
	// key: it fetches, and pushes only when DeployWrite.
	DeployRepoID int64
	DeployWrite  bool
}

// ReadOnlyKeyMessage is what a read-only deploy key's push is told, as
// the platform words it.
const ReadOnlyKeyMessage = "The key you are authenticating with has been marked as read only."

// ServeStream authorises the caller's use of the service on owner/name
// as git over HTTP does (the same roles, token-free for keys, migration
// locks) and serves it over req's streams: a push runs the registered
// pre-receive checks (rulesets, branch protection, ...), is logged in the
// push log before its references move, and is recorded as the same
// domain events, by the same code as over HTTP. It returns git's exit
// status, or before git runs an *apierr.Error whose message the client
// may see (404: the repository is hidden or missing), ErrBusy, or an
// internal error.
func (h *Handler) ServeStream(ctx context.Context, c StreamCaller, owner, name string, req githttp.StreamRequest) (int, error) {
	var repo *repos.Repository
	var err error
	access := req.Service
	if access == githttp.ServiceUploadArchive {
		access = githttp.ServiceUploadPack // reads, as a clone
	}
	if c.DeployRepoID != 0 {
		repo, err = h.authorizeDeployKey(ctx, c, owner, name, access)
	} else {
		repo, err = h.authorize(ctx, c.Principal, owner, name, access)
	}
	if err != nil {
		return 0, err
	}
	req.RepoDir, req.RemoteUser = h.Repos.GitDir(repo.ID), c.Principal.Account.Login
	if req.Service == githttp.ServiceReceivePack {
		push := &pushRecorder{h: h, repoID: repo.ID, principal: c.Principal, key: newPushKey(), ssh: true}
		req.PushID, req.PreReceive, req.PostReceive = push.key, push.preReceive, push.postReceive
		defer push.done()
	}
	if req.Service != githttp.ServiceUploadPack || !repo.Owner.IsOrg() {
		return h.Git.ServeStream(ctx, req)
	}
	sniff := &fetchSniffer{r: req.Stdin}
	req.Stdin = sniff
	status, err := h.Git.ServeStream(ctx, req)
	if action := sniff.kind(); err == nil && status == 0 && action != "" {
		// Recorded once git served it: nothing of a stream is read ahead.
		if err := recordGitVia(context.WithoutCancel(ctx), h.DB, c.Principal, repo, action, transportSSH); err != nil {
			h.Logger.ErrorContext(ctx, "githost: audit a fetch over SSH", "repo", repo.FullName(), "err", err)
		}
	}
	return status, err
}

// authorizeDeployKey returns the deploy key's repository when it is
// owner/name (a 404 otherwise), refusing a read-only key's push and any
// push to a repository locked for migration.
func (h *Handler) authorizeDeployKey(ctx context.Context, c StreamCaller, owner, name string, service githttp.Service) (*repos.Repository, error) {
	repo, err := h.lookup(ctx, owner, name)
	if err != nil {
		return nil, err
	}
	if repo.ID != c.DeployRepoID {
		return nil, apierr.NotFound()
	}
	if service == githttp.ServiceReceivePack {
		switch {
		case !c.DeployWrite:
			return nil, apierr.Forbidden(ReadOnlyKeyMessage)
		case repo.MigrationLocked:
			return nil, errLocked
		case repo.Archived:
			return nil, errArchived
		}
	}
	return repo, nil
}

// ServeDirStream serves a git service over req's streams for a bare
// repository an area owns outside the repositories table (a gist), as
// ServeDir does over HTTP: access answers what the caller's principal
// may do (the same DirAccess for both transports), and the repository's
// PreReceive and PostReceive run around a push. A deploy key reaches
// its one repository alone, never such a directory (a 404). It returns
// git's exit status, or before git runs an *apierr.Error, ErrBusy,
// githttp.ErrNoRepository or an internal error, as ServeStream does.
func (h *Handler) ServeDirStream(ctx context.Context, c StreamCaller, access DirAccess, req githttp.StreamRequest) (int, error) {
	if c.DeployRepoID != 0 {
		return 0, apierr.NotFound()
	}
	service := req.Service
	if service == githttp.ServiceUploadArchive {
		service = githttp.ServiceUploadPack // reads, as a clone
	}
	t, err := access(ctx, c.Principal, service)
	if err != nil {
		return 0, err
	}
	req.RepoDir, req.RemoteUser = t.Dir, c.Principal.Account.Login
	req.PreReceive, req.PostReceive = t.PreReceive, t.PostReceive
	return h.Git.ServeStream(ctx, req)
}
