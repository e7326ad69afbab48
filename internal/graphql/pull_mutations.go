package graphql

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

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

// The pull request mutations change pull requests through
// pulls.Service and issues.Service, as the REST routes do (the same
// checks, events, webhooks and feeds, in one transaction each): an id
// the caller cannot read is NOT_FOUND, credentials without the scope or
// permission REST needs or a caller without the role are FORBIDDEN, and
// what the service refuses (422, 405, 409) is UNPROCESSABLE with its
// message.

// mutationTarget is the pull request a mutation changes and its actor.
type mutationTarget struct {
	pull  *pullRequestResolver
	actor *accounts.Account
	// refused is the FORBIDDEN error naming the mutation.
	refused error
}

// pullTarget resolves the pull request of id for mutation, with the
// credentials' check of what it changes (mayWritePulls, or mayMerge).
func (h *Handler) pullTarget(ctx context.Context, id gql.ID, mutation string, may func(*auth.Principal, *repos.Repository) bool) (*mutationTarget, error) {
	pr, err := h.pullByNodeID(ctx, string(id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id))
	} else if err != nil {
		return nil, err
	}
	t := &mutationTarget{pull: pr, refused: pullRefusal(ctx, mutation)}
	if !may(requestFrom(ctx).principal, pr.p.Repo) {
		return nil, t.refused
	}
	if t.actor, err = accounts.ByID(ctx, h.DB, requestFrom(ctx).principal.UserID()); err != nil {
		return nil, err
	}
	return t, nil
}

// pullRefusal is the FORBIDDEN error of a mutation the caller may not run.
func pullRefusal(ctx context.Context, mutation string) error {
	login := ""
	if a := requestFrom(ctx).principal.Account; a != nil {
		login = a.Login
	}
	return forbidden(fmt.Sprintf("%s does not have the correct permissions to execute `%s`", login, mutation))
}

// mayPush reports whether the caller has push access to the target's
// repository.
func (t *mutationTarget) mayPush() bool { return t.pull.repo.role >= auth.RoleWrite }

// pullServiceError is a service's error as the mutation answers it.
func pullServiceError(err error, refused error) error {
	e, ok := errors.AsType[*apierr.Error](err)
	switch {
	case !ok:
		return err
	case e.Status == http.StatusForbidden:
		return refused
	case e.Status == http.StatusNotFound:
		return notFound(e.Message)
	}
	msg := e.Message
	for _, f := range e.Errors {
		if f.Message != "" {
			msg = f.Message
		}
	}
	return &fieldError{typ: "UNPROCESSABLE", msg: msg}
}

// pullPayload resolves the payloads that answer a pull request.
type pullPayload struct {
	pull             *pullRequestResolver
	clientMutationID *string
}

func (p *pullPayload) PullRequest() *pullRequestResolver { return p.pull }
func (p *pullPayload) ClientMutationID() *string         { return p.clientMutationID }

// payload reloads the target's pull request after a change.
func (h *Handler) payload(ctx context.Context, t *mutationTarget, clientMutationID *string) (*pullPayload, error) {
	p, err := h.Pulls.Get(ctx, t.pull.p.Repo, t.pull.p.Number())
	if err != nil {
		return nil, err
	}
	return &pullPayload{pull: &pullRequestResolver{h: h, p: p, repo: t.pull.repo}, clientMutationID: clientMutationID}, nil
}

// createPullRequestInput is CreatePullRequestInput.
type createPullRequestInput struct {
	RepositoryID               gql.ID
	HeadRepositoryID           *gql.ID
	BaseRefName, HeadRefName   string
	Title                      string
	Body                       *string
	Draft, MaintainerCanModify bool
	ClientMutationID           *string
}

// CreatePullRequest opens a pull request of headRefName (a branch of
// the repository, or of headRepositoryId, a fork in its network) into
// baseRefName, as POST /repos/{owner}/{repo}/pulls.
func (q *root) CreatePullRequest(ctx context.Context, args struct{ Input createPullRequestInput }) (*pullPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	n, err := h.node(ctx, string(in.RepositoryID))
	if err != nil {
		return nil, err
	}
	repo, ok := n.ToRepository()
	if !ok {
		return nil, notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", in.RepositoryID))
	}
	refused := pullRefusal(ctx, "CreatePullRequest")
	principal := requestFrom(ctx).principal
	if !mayReadPulls(principal, repo.r) || !mayWritePulls(principal, repo.r) {
		return nil, refused
	}
	head := in.HeadRefName
	if in.HeadRepositoryID != nil {
		hn, err := h.node(ctx, string(*in.HeadRepositoryID))
		if err != nil {
			return nil, err
		}
		headRepo, ok := hn.ToRepository()
		if !ok {
			return nil, notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", *in.HeadRepositoryID))
		}
		if headRepo.r.ID != repo.r.ID {
			head = headRepo.r.Owner.Login + ":" + in.HeadRefName
		}
	}
	actor, err := accounts.ByID(ctx, h.DB, principal.UserID())
	if err != nil {
		return nil, err
	}
	np := pulls.NewPull{Title: in.Title, Head: head, Base: in.BaseRefName, Draft: in.Draft}
	if in.Body != nil {
		np.Body = *in.Body
	}
	p, err := h.Pulls.Create(ctx, repo.r, actor, np)
	if err != nil {
		return nil, pullServiceError(err, refused)
	}
	return &pullPayload{pull: &pullRequestResolver{h: h, p: p, repo: repo}, clientMutationID: in.ClientMutationID}, nil
}

// pullRequestInput is the input of closePullRequest and
// reopenPullRequest.
type pullRequestInput struct {
	PullRequestID    gql.ID
	ClientMutationID *string
}

// ClosePullRequest closes the pull request, as PATCH with state closed.
func (q *root) ClosePullRequest(ctx context.Context, args struct{ Input pullRequestInput }) (*pullPayload, error) {
	state := issues.StateClosed
	return q.handler(ctx).updatePull(ctx, args.Input.PullRequestID, args.Input.ClientMutationID, "ClosePullRequest", pulls.Changes{State: &state})
}

// ReopenPullRequest reopens the pull request, as PATCH with state open.
func (q *root) ReopenPullRequest(ctx context.Context, args struct{ Input pullRequestInput }) (*pullPayload, error) {
	state := issues.StateOpen
	return q.handler(ctx).updatePull(ctx, args.Input.PullRequestID, args.Input.ClientMutationID, "ReopenPullRequest", pulls.Changes{State: &state})
}

// updatePull changes the pull request as PATCH .../pulls/{pull_number}
// does: its author, or push access.
func (h *Handler) updatePull(ctx context.Context, id gql.ID, clientMutationID *string, mutation string, c pulls.Changes) (*pullPayload, error) {
	t, err := h.pullTarget(ctx, id, mutation, mayWritePulls)
	if err != nil {
		return nil, err
	}
	p, err := h.Pulls.Update(ctx, t.pull.p.Repo, t.actor, t.pull.p.Number(), c, t.mayPush())
	if err != nil {
		return nil, pullServiceError(err, t.refused)
	}
	return &pullPayload{pull: &pullRequestResolver{h: h, p: p, repo: t.pull.repo}, clientMutationID: clientMutationID}, nil
}

// updatePullRequestInput is UpdatePullRequestInput.
type updatePullRequestInput struct {
	PullRequestID                     gql.ID
	Title, Body, BaseRefName, State   *string
	MaintainerCanModify               *bool
	AssigneeIDs, LabelIDs, ProjectIDs *[]gql.ID
	MilestoneID                       *gql.ID
	ClientMutationID                  *string
}

// UpdatePullRequest changes the title, body, base branch and state (as
// PATCH .../pulls/{pull_number}), then the assignees, labels and
// milestone (as PATCH .../issues/{issue_number}, which needs triage).
func (q *root) UpdatePullRequest(ctx context.Context, args struct{ Input updatePullRequestInput }) (*pullPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	t, err := h.pullTarget(ctx, in.PullRequestID, "UpdatePullRequest", mayWritePulls)
	if err != nil {
		return nil, err
	}
	c := pulls.Changes{Title: in.Title, Body: in.Body, Base: in.BaseRefName}
	if in.State != nil {
		state := strings.ToLower(*in.State)
		c.State = &state
	}
	if c != (pulls.Changes{}) {
		if _, err := h.Pulls.Update(ctx, t.pull.p.Repo, t.actor, t.pull.p.Number(), c, t.mayPush()); err != nil {
			return nil, pullServiceError(err, t.refused)
		}
	}
	meta, err := h.metadataChanges(ctx, t, in)
	if err != nil {
		return nil, err
	}
	if meta != (issues.Changes{}) {
		triage, err := issues.CanTriage(ctx, h.DB, requestFrom(ctx).principal, t.pull.repo.role, t.pull.p.Repo)
		if err != nil {
			return nil, err
		}
		if _, err := h.Issues.Update(ctx, t.pull.p.Repo, t.actor, t.pull.p.Number(), meta, triage); err != nil {
			return nil, pullServiceError(err, t.refused)
		}
	}
	return h.payload(ctx, t, in.ClientMutationID)
}

// metadataChanges reads the assignee, label and milestone ids of an
// update into the issue change REST would make: NOT_FOUND for an id of
// nothing of the repository.
func (h *Handler) metadataChanges(ctx context.Context, t *mutationTarget, in updatePullRequestInput) (issues.Changes, error) {
	var c issues.Changes
	repo := t.pull.p.Repo
	if in.AssigneeIDs != nil {
		logins := []string{}
		for _, id := range *in.AssigneeIDs {
			a, err := h.userByNodeID(ctx, id)
			if err != nil {
				return c, err
			}
			logins = append(logins, a.Login)
		}
		c.Assignees = &logins
	}
	if in.LabelIDs != nil {
		all, err := h.Issues.Labels(ctx, repo.ID, 1<<20, 0)
		if err != nil {
			return c, err
		}
		names := []string{}
		for _, id := range *in.LabelIDs {
			i := slices.IndexFunc(all, func(lb *issues.Label) bool { return wire.NodeID("LA", lb.ID) == string(id) })
			if i < 0 {
				return c, notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id))
			}
			names = append(names, all[i].Name)
		}
		c.Labels = &names
	}
	if in.MilestoneID != nil {
		all, err := h.Issues.Milestones(ctx, repo, "all", "", "", 1<<20, 0)
		if err != nil {
			return c, err
		}
		i := slices.IndexFunc(all, func(m *issues.Milestone) bool { return wire.NodeID("MI", m.ID) == string(*in.MilestoneID) })
		if i < 0 {
			return c, notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", *in.MilestoneID))
		}
		c.Milestone = &all[i].Number
	}
	return c, nil
}

// userByNodeID is the user of a node id; NOT_FOUND when it names none.
func (h *Handler) userByNodeID(ctx context.Context, id gql.ID) (*accounts.Account, error) {
	missing := notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id))
	typ, dbID, ok := wire.ParseNodeID(string(id))
	if !ok || typ != "U" {
		return nil, missing
	}
	a, err := accounts.ByID(ctx, h.DB, dbID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, missing
	}
	return a, err
}

// mergePullRequestInput is MergePullRequestInput.
type mergePullRequestInput struct {
	PullRequestID                           gql.ID
	MergeMethod                             string
	CommitHeadline, CommitBody, AuthorEmail *string
	ExpectedHeadOid                         *gitObjectID
	ClientMutationID                        *string
}

// mergePermissions are what merging needs of a permission-based token,
// as PUT .../pulls/{pull_number}/merge.
var mergePermissions = auth.Perm("contents:write")

// mayMerge reports whether the caller's credentials may merge the
// repository's pull requests: Contents write of a permission-based token
// instead of Pull requests write; an archived repository's may not be
// merged.
func mayMerge(p *auth.Principal, repo *repos.Repository) bool {
	return !repo.Archived && mayWrite(p, repo, mergePermissions)
}

// MergePullRequest merges the pull request as PUT
// .../pulls/{pull_number}/merge: push access, and Contents write of a
// fine-grained token.
func (q *root) MergePullRequest(ctx context.Context, args struct{ Input mergePullRequestInput }) (*pullPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	t, err := h.pullTarget(ctx, in.PullRequestID, "MergePullRequest", mayMerge)
	if err != nil {
		return nil, err
	}
	if !t.mayPush() {
		return nil, t.refused
	}
	m := pulls.MergeRequest{Method: strings.ToLower(in.MergeMethod)}
	if in.CommitHeadline != nil {
		m.Title, m.HasTitle = *in.CommitHeadline, true
	}
	if in.CommitBody != nil {
		m.Message, m.HasMessage = *in.CommitBody, true
	}
	if in.ExpectedHeadOid != nil {
		m.SHA = string(*in.ExpectedHeadOid)
	}
	who, err := pulls.Identity(ctx, h.DB, t.actor)
	if err != nil {
		return nil, err
	}
	if _, err := h.Pulls.Merge(ctx, t.pull.p.Repo, t.actor, who, t.pull.p.Number(), m); err != nil {
		return nil, pullServiceError(err, t.refused)
	}
	return h.payload(ctx, t, in.ClientMutationID)
}

// requestReviewsInput is RequestReviewsInput.
type requestReviewsInput struct {
	PullRequestID    gql.ID
	UserIDs, TeamIDs *[]gql.ID
	Union            bool
	ClientMutationID *string
}

// RequestReviews asks the users to review, as POST
// .../requested_reviewers (the author, or push access); without union
// the users asked before and not now are no longer asked. Teams are
// UNPROCESSABLE: forgeapi requests no team's review.
func (q *root) RequestReviews(ctx context.Context, args struct{ Input requestReviewsInput }) (*pullPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	t, err := h.pullTarget(ctx, in.PullRequestID, "RequestReviews", mayWritePulls)
	if err != nil {
		return nil, err
	}
	if in.TeamIDs != nil && len(*in.TeamIDs) > 0 {
		return nil, &fieldError{typ: "UNPROCESSABLE", msg: "Team review requests are not supported"}
	}
	asked := map[string]bool{}
	var logins []string
	if in.UserIDs != nil {
		for _, id := range *in.UserIDs {
			a, err := h.userByNodeID(ctx, id)
			if err != nil {
				return nil, err
			}
			logins = append(logins, a.Login)
			asked[a.Login] = true
		}
	}
	repo, number := t.pull.p.Repo, t.pull.p.Number()
	if !in.Union {
		var gone []string
		for _, a := range t.pull.p.RequestedReviewers {
			if !asked[a.Login] {
				gone = append(gone, a.Login)
			}
		}
		if len(gone) > 0 {
			if _, err := h.Pulls.RequestReviewers(ctx, repo, t.actor, number, gone, nil, true); err != nil {
				return nil, pullServiceError(err, t.refused)
			}
		}
	}
	if len(logins) > 0 {
		if _, err := h.Pulls.RequestReviewers(ctx, repo, t.actor, number, logins, nil, false); err != nil {
			return nil, pullServiceError(err, t.refused)
		}
	}
	return h.payload(ctx, t, in.ClientMutationID)
}

// reviewPayload resolves the payloads that answer a review.
type reviewPayload struct {
	review           *reviewResolver
	clientMutationID *string
}

func (p *reviewPayload) PullRequestReview() *reviewResolver { return p.review }
func (p *reviewPayload) ClientMutationID() *string          { return p.clientMutationID }

// addPullRequestReviewInput is AddPullRequestReviewInput.
type addPullRequestReviewInput struct {
	PullRequestID gql.ID
	Body          *string
	Event         *string
	CommitOID     *gitObjectID
	Comments      *[]*struct {
		Body, Path string
		Position   int32
	}
	Threads *[]*struct {
		Body, Path string
		Line       int32
		Side       string
		StartLine  *int32
		StartSide  string
	}
	ClientMutationID *string
}

// AddPullRequestReview reviews the pull request as POST .../reviews:
// with an event it is submitted at once, without it stays pending.
func (q *root) AddPullRequestReview(ctx context.Context, args struct{ Input addPullRequestReviewInput }) (*reviewPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	t, err := h.pullTarget(ctx, in.PullRequestID, "AddPullRequestReview", mayWritePulls)
	if err != nil {
		return nil, err
	}
	n := pulls.NewReview{}
	if in.Body != nil {
		n.Body = *in.Body
	}
	if in.Event != nil {
		n.Event = *in.Event
	}
	if in.CommitOID != nil {
		n.CommitID = string(*in.CommitOID)
	}
	if in.Comments != nil {
		for _, c := range *in.Comments {
			if c != nil {
				n.Comments = append(n.Comments, pulls.NewComment{Body: c.Body, Path: c.Path, Position: int(c.Position)})
			}
		}
	}
	if in.Threads != nil {
		for _, c := range *in.Threads {
			if c != nil {
				n.Comments = append(n.Comments, pulls.NewComment{Body: c.Body, Path: c.Path, Line: int(c.Line), Side: c.Side})
			}
		}
	}
	rv, err := h.Pulls.CreateReview(ctx, t.pull.p.Repo, t.actor, t.pull.p.Number(), n)
	if err != nil {
		return nil, pullServiceError(err, t.refused)
	}
	return &reviewPayload{review: &reviewResolver{pull: t.pull, rv: rv}, clientMutationID: in.ClientMutationID}, nil
}

// submitPullRequestReviewInput is SubmitPullRequestReviewInput.
type submitPullRequestReviewInput struct {
	PullRequestID, PullRequestReviewID *gql.ID
	Event                              string
	Body                               *string
	ClientMutationID                   *string
}

// SubmitPullRequestReview submits the caller's pending review (of
// pullRequestReviewId, or their pending one on pullRequestId) with the
// event, as POST .../reviews/{review_id}/events.
func (q *root) SubmitPullRequestReview(ctx context.Context, args struct{ Input submitPullRequestReviewInput }) (*reviewPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	var pullID gql.ID
	var reviewID int64
	switch {
	case in.PullRequestReviewID != nil:
		n, err := h.node(ctx, string(*in.PullRequestReviewID))
		if err != nil {
			return nil, err
		}
		rv, ok := n.ToPullRequestReview()
		if !ok {
			return nil, notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", *in.PullRequestReviewID))
		}
		pullID, reviewID = rv.pull.ID(), rv.rv.ID
	case in.PullRequestID != nil:
		pullID = *in.PullRequestID
	default:
		return nil, invalid("One of pullRequestId or pullRequestReviewId is required.")
	}
	t, err := h.pullTarget(ctx, pullID, "SubmitPullRequestReview", mayWritePulls)
	if err != nil {
		return nil, err
	}
	if reviewID == 0 {
		list, err := t.pull.reviewsOf(ctx)
		if err != nil {
			return nil, err
		}
		for _, rv := range list {
			if rv.State == pulls.ReviewPending && rv.User != nil && rv.User.ID == t.actor.ID {
				reviewID = rv.ID
			}
		}
		if reviewID == 0 {
			return nil, &fieldError{typ: "UNPROCESSABLE", msg: "No pending review to submit."}
		}
	}
	body := ""
	if in.Body != nil {
		body = *in.Body
	}
	rv, err := h.Pulls.SubmitReview(ctx, t.pull.p.Repo, t.actor, t.pull.p.Number(), reviewID, in.Event, body)
	if err != nil {
		return nil, pullServiceError(err, t.refused)
	}
	return &reviewPayload{review: &reviewResolver{pull: t.pull, rv: rv}, clientMutationID: in.ClientMutationID}, nil
}
