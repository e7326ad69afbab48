package graphql

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/issues"
	"forgeapi/internal/pulls"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// numberArgs are the argument of Repository.pullRequest.
type numberArgs struct{ Number int32 }

// PullRequest is the repository's pull request of that number: FORBIDDEN
// when the credentials may not read the repository's pull requests,
// NOT_FOUND when there is none.
func (r *repositoryResolver) PullRequest(ctx context.Context, args numberArgs) (*pullRequestResolver, error) {
	if !mayReadPulls(requestFrom(ctx).principal, r.r) {
		return nil, forbidden("Resource not accessible by personal access token")
	}
	p, err := r.h.Pulls.Get(ctx, r.r, int64(args.Number))
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("Could not resolve to a PullRequest with the number of %d.", args.Number))
	} else if err != nil {
		return nil, err
	}
	return &pullRequestResolver{h: r.h, p: p, repo: r}, nil
}

// mayReadPulls reports whether credentials that see the repository read
// its pull requests: a fine-grained token reads a private one's only
// with Pull requests read (REST's rule for the pulls routes).
func mayReadPulls(p *auth.Principal, repo *repos.Repository) bool {
	if p.FineGrained() && repo.Private {
		return p.Token.Selects(repo.ID, repo.Owner.ID) && p.Token.Grant.Satisfies(auth.Perm("pull_requests:read"))
	}
	return true
}

// pullByNodeID is the pull request of a node id when the caller reads
// it (the repository visible, its pull requests readable);
// store.ErrNotFound otherwise.
func (h *Handler) pullByNodeID(ctx context.Context, id string) (*pullRequestResolver, error) {
	p, err := h.Pulls.ByNodeID(ctx, id)
	if err != nil {
		return nil, err
	}
	repo, err := h.visibleRepository(ctx, p.Repo)
	if err != nil {
		return nil, err
	}
	if !mayReadPulls(requestFrom(ctx).principal, p.Repo) {
		return nil, store.ErrNotFound
	}
	return &pullRequestResolver{h: h, p: p, repo: repo}, nil
}

// pullRequestResolver resolves PullRequest.
type pullRequestResolver struct {
	h    *Handler
	p    *pulls.PullRequest
	repo *repositoryResolver
	// page, when set, is the page the pull request was listed in, which
	// loads its reviews and statuses with the others' (pullPage).
	page *pullPage

	reviewsOnce sync.Once
	reviews     []*pulls.Review
	reviewsErr  error
}

func (r *pullRequestResolver) ID() gql.ID                      { return gql.ID(wire.NodeID("PR", r.p.ID)) }
func (r *pullRequestResolver) DatabaseID() *int32              { id := int32(r.p.ID); return &id }
func (r *pullRequestResolver) Number() int32                   { return int32(r.p.Number()) }
func (r *pullRequestResolver) Title() string                   { return r.p.Issue.Title }
func (r *pullRequestResolver) Body() string                    { return r.p.Issue.Body }
func (r *pullRequestResolver) IsDraft() bool                   { return r.p.Draft }
func (r *pullRequestResolver) Closed() bool                    { return !r.p.Open() }
func (r *pullRequestResolver) Merged() bool                    { return r.p.MergedAt != nil }
func (r *pullRequestResolver) HeadRefName() string             { return r.p.HeadRef }
func (r *pullRequestResolver) BaseRefName() string             { return r.p.BaseRef }
func (r *pullRequestResolver) Repository() *repositoryResolver { return r.repo }

// URL is the pull request's web page. It takes no context, so that a
// page of pull requests asking for nothing else that does resolves in
// place (gh pr list's).
func (r *pullRequestResolver) URL() uri {
	return uri(r.repo.web + "/pull/" + wire.Itoa(r.p.Number()))
}

// State is OPEN, CLOSED or MERGED.
func (r *pullRequestResolver) State() string {
	switch {
	case r.p.MergedAt != nil:
		return "MERGED"
	case r.p.Issue.State == issues.StateOpen:
		return "OPEN"
	}
	return "CLOSED"
}

// draftInput is the input of the draft mutations.
type draftInput struct {
	PullRequestID    gql.ID
	ClientMutationID *string
}

// draftArgs are the argument of the draft mutations.
type draftArgs struct{ Input draftInput }

// draftPayload resolves the draft mutations' payloads.
type draftPayload struct {
	pull             *pullRequestResolver
	clientMutationID *string
}

func (p *draftPayload) PullRequest() *pullRequestResolver { return p.pull }
func (p *draftPayload) ClientMutationID() *string         { return p.clientMutationID }

// MarkPullRequestReadyForReview takes the pull request out of draft.
func (q *root) MarkPullRequestReadyForReview(ctx context.Context, args draftArgs) (*draftPayload, error) {
	return q.handler(ctx).setDraft(ctx, args.Input, false, "MarkPullRequestReadyForReview")
}

// ConvertPullRequestToDraft makes the pull request a draft.
func (q *root) ConvertPullRequestToDraft(ctx context.Context, args draftArgs) (*draftPayload, error) {
	return q.handler(ctx).setDraft(ctx, args.Input, true, "ConvertPullRequestToDraft")
}

// draftPermissions are what the draft mutations need of a
// permission-based token, as PATCH .../pulls/{pull_number} does.
var draftPermissions = auth.Perm("pull_requests:write")

// mayWritePulls reports whether the caller's credentials may change the
// repository's pull requests (Pull requests write of a permission-based
// token); an archived repository's may not be changed.
func mayWritePulls(p *auth.Principal, repo *repos.Repository) bool {
	return !repo.Archived && mayWrite(p, repo, draftPermissions)
}

// setDraft marks the pull request of input.pullRequestId a draft or
// ready through pulls.Service.SetDraft (its events, its checks):
// NOT_FOUND when no pull request the caller reads has that id, FORBIDDEN
// when the caller is neither its author nor has push access or the
// credentials lack the scope or permission (mutation names the
// mutation in that message, as the platform's).
func (h *Handler) setDraft(ctx context.Context, input draftInput, draft bool, mutation string) (*draftPayload, error) {
	pr, err := h.pullByNodeID(ctx, string(input.PullRequestID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", input.PullRequestID))
	} else if err != nil {
		return nil, err
	}
	principal := requestFrom(ctx).principal
	login := ""
	if principal.Account != nil {
		login = principal.Account.Login
	}
	refused := forbidden(fmt.Sprintf("%s does not have the correct permissions to execute `%s`", login, mutation))
	if !mayWritePulls(principal, pr.p.Repo) {
		return nil, refused
	}
	actor, err := accounts.ByID(ctx, h.DB, principal.UserID())
	if err != nil {
		return nil, err
	}
	p, err := h.Pulls.SetDraft(ctx, pr.p.Repo, actor, pr.p.Number(), draft, pr.repo.role >= auth.RoleWrite)
	if e, ok := errors.AsType[*apierr.Error](err); ok {
		if e.Status == http.StatusForbidden {
			return nil, refused
		}
		return nil, &fieldError{typ: "UNPROCESSABLE", msg: e.Message}
	} else if err != nil {
		return nil, err
	}
	return &draftPayload{pull: &pullRequestResolver{h: h, p: p, repo: pr.repo}, clientMutationID: input.ClientMutationID}, nil
}
