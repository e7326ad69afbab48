package graphql

import (
	"context"
	"errors"
	"strings"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/issues"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// lockReason is the LockReason enum value of a REST lock reason
// ("too heated" is TOO_HEATED); nil for none.
func lockReason(reason string) *string {
	if reason == "" {
		return nil
	}
	s := strings.ToUpper(strings.NewReplacer("-", "_", " ", "_").Replace(reason))
	return &s
}

// restLockReason is the REST lock reason of a LockReason value.
func restLockReason(reason string) string {
	r := strings.ToLower(reason)
	if r == "off_topic" {
		return "off-topic"
	}
	return strings.ReplaceAll(r, "_", " ")
}

func (r *issueResolver) ActiveLockReason() *string { return lockReason(r.is.LockReason) }

// IsPinned reports whether the issue is pinned to its repository.
func (r *issueResolver) IsPinned(ctx context.Context) (*bool, error) {
	pinned, err := r.h.Issues.IsPinned(ctx, r.is.ID)
	return &pinned, err
}

func (r *pullRequestResolver) Locked() bool              { return r.p.Issue.Locked }
func (r *pullRequestResolver) ActiveLockReason() *string { return lockReason(r.p.Issue.LockReason) }

// lockable is what Issue and PullRequest resolve of the Lockable
// interface.
type lockable interface {
	Locked() bool
	ActiveLockReason() *string
}

// lockableResolver resolves Lockable.
type lockableResolver struct{ lockable }

func (r *lockableResolver) ToIssue() (*issueResolver, bool) {
	i, ok := r.lockable.(*issueResolver)
	return i, ok
}

func (r *lockableResolver) ToPullRequest() (*pullRequestResolver, bool) {
	p, ok := r.lockable.(*pullRequestResolver)
	return p, ok
}

// lockInput is the LockLockableInput and UnlockLockableInput inputs.
type lockInput struct {
	LockableID       gql.ID
	LockReason       *string
	ClientMutationID *string
}

// lockPayload resolves LockLockablePayload and UnlockLockablePayload.
type lockPayload struct {
	h                *Handler
	record           lockable
	actor            *actorResolver
	clientMutationID *string
}

func (p *lockPayload) LockedRecord() *lockableResolver   { return &lockableResolver{p.record} }
func (p *lockPayload) UnlockedRecord() *lockableResolver { return &lockableResolver{p.record} }
func (p *lockPayload) Actor() *actorResolver             { return p.actor }
func (p *lockPayload) ClientMutationID() *string         { return p.clientMutationID }

// LockLockable locks an issue's or pull request's conversation through
// issues.Service.Lock, as PUT .../issues/{issue_number}/lock: triagers
// with Issues write; locking a locked one changes nothing (as the
// platform, which gh unlocks first to change the reason).
func (q *root) LockLockable(ctx context.Context, args struct{ Input lockInput }) (*lockPayload, error) {
	reason := ""
	if args.Input.LockReason != nil {
		reason = restLockReason(*args.Input.LockReason)
	}
	return q.handler(ctx).lock(ctx, args.Input, true, reason, "LockLockable")
}

// UnlockLockable unlocks an issue's or pull request's conversation, as
// DELETE .../issues/{issue_number}/lock.
func (q *root) UnlockLockable(ctx context.Context, args struct{ Input lockInput }) (*lockPayload, error) {
	return q.handler(ctx).lock(ctx, args.Input, false, "", "UnlockLockable")
}

// lock locks or unlocks the input's lockable.
func (h *Handler) lock(ctx context.Context, in lockInput, lock bool, reason, mutation string) (*lockPayload, error) {
	t, err := h.target(ctx, in.LockableID, true)
	if err != nil {
		return nil, err
	}
	actor, triage, err := h.writer(ctx, t.repo, issuesWrite, mutation)
	if err != nil {
		return nil, err
	}
	if !triage {
		return nil, refusal(requestFrom(ctx).principal, mutation)
	}
	if err := h.Issues.Lock(ctx, t.repo.r, actor, t.number(), lock, reason); err != nil {
		return nil, serviceError(err)
	}
	if t, err = h.reload(ctx, t); err != nil {
		return nil, err
	}
	return &lockPayload{h: h, record: t.resolver(h).(lockable), actor: h.actorOf(actor), clientMutationID: in.ClientMutationID}, nil
}

// issueIDInput is the PinIssueInput, UnpinIssueInput and
// DeleteIssueInput inputs.
type issueIDInput struct {
	IssueID          gql.ID
	ClientMutationID *string
}

// pinPayload resolves PinIssuePayload and UnpinIssuePayload.
type pinPayload struct {
	issue            *issueResolver
	clientMutationID *string
}

func (p *pinPayload) Issue() *issueResolver     { return p.issue }
func (p *pinPayload) ID() *gql.ID               { return nil }
func (p *pinPayload) ClientMutationID() *string { return p.clientMutationID }

// PinIssue pins an issue to its repository through issues.Service.Pin:
// push access and Issues write, at most issues.MaxPinned a repository
// (UNPROCESSABLE beyond).
func (q *root) PinIssue(ctx context.Context, args struct{ Input issueIDInput }) (*pinPayload, error) {
	return q.handler(ctx).pin(ctx, args.Input, false, "PinIssue")
}

// UnpinIssue unpins an issue; its payload's id (the pin's) is null.
func (q *root) UnpinIssue(ctx context.Context, args struct{ Input issueIDInput }) (*pinPayload, error) {
	return q.handler(ctx).pin(ctx, args.Input, true, "UnpinIssue")
}

// pin pins or unpins the input's issue.
func (h *Handler) pin(ctx context.Context, in issueIDInput, unpin bool, mutation string) (*pinPayload, error) {
	t, err := h.target(ctx, in.IssueID, false)
	if err != nil {
		return nil, err
	}
	actor, err := h.writerOf(ctx, t.repo, issuesWrite, auth.RoleWrite, mutation)
	if err != nil {
		return nil, err
	}
	is, err := h.Issues.Pin(ctx, t.repo.r, actor, t.number(), unpin)
	if err != nil {
		return nil, serviceError(err)
	}
	return &pinPayload{issue: &issueResolver{h: h, is: is, repo: t.repo}, clientMutationID: in.ClientMutationID}, nil
}

// deleteIssuePayload resolves DeleteIssuePayload.
type deleteIssuePayload struct {
	repo             *repositoryResolver
	clientMutationID *string
}

func (p *deleteIssuePayload) Repository() *repositoryResolver { return p.repo }
func (p *deleteIssuePayload) ClientMutationID() *string       { return p.clientMutationID }

// DeleteIssue deletes an issue through issues.Service.Delete (the
// issues deleted webhook): admins of the repository with Issues write,
// as the platform; a pull request is NOT_FOUND.
func (q *root) DeleteIssue(ctx context.Context, args struct{ Input issueIDInput }) (*deleteIssuePayload, error) {
	h := q.handler(ctx)
	t, err := h.target(ctx, args.Input.IssueID, false)
	if err != nil {
		return nil, err
	}
	actor, err := h.writerOf(ctx, t.repo, issuesWrite, auth.RoleAdmin, "DeleteIssue")
	if err != nil {
		return nil, err
	}
	if err := h.Issues.Delete(ctx, t.repo.r, actor, t.number()); err != nil {
		return nil, serviceError(err)
	}
	return &deleteIssuePayload{repo: t.repo, clientMutationID: args.Input.ClientMutationID}, nil
}

// transferIssueInput is the TransferIssueInput input.
type transferIssueInput struct {
	IssueID, RepositoryID gql.ID
	CreateLabelsIfMissing bool
	ClientMutationID      *string
}

// TransferIssue moves an issue to another repository of the same owner
// through issues.Service.Transfer: push access and Issues write on both
// (FORBIDDEN otherwise); a destination the caller does not see is
// NOT_FOUND. createLabelsIfMissing is refused (forgeapi keeps the labels
// the destination has and drops the others, as the platform's default).
func (q *root) TransferIssue(ctx context.Context, args struct{ Input transferIssueInput }) (*issuePayload, error) {
	in := args.Input
	h := q.handler(ctx)
	if in.CreateLabelsIfMissing {
		return nil, unprocessable("forgeapi does not create missing labels: createLabelsIfMissing must be false.")
	}
	t, err := h.target(ctx, in.IssueID, false)
	if err != nil {
		return nil, err
	}
	dest, err := h.repositoryOfID(ctx, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	actor, err := h.writerOf(ctx, t.repo, issuesWrite, auth.RoleWrite, "TransferIssue")
	if err != nil {
		return nil, err
	}
	if _, err := h.writerOf(ctx, dest, issuesWrite, auth.RoleWrite, "TransferIssue"); err != nil {
		return nil, err
	}
	is, err := h.Issues.Transfer(ctx, t.repo.r, dest.r, actor, t.number())
	if errors.Is(err, store.ErrNotFound) {
		return nil, unresolved(in.IssueID)
	} else if err != nil {
		return nil, serviceError(err)
	}
	return &issuePayload{issue: &issueResolver{h: h, is: is, repo: dest}, clientMutationID: in.ClientMutationID}, nil
}

// pinnedIssueResolver resolves PinnedIssue.
type pinnedIssueResolver struct {
	h    *Handler
	pin  *issues.Pin
	repo *repositoryResolver
}

func (r *pinnedIssueResolver) ID() gql.ID                      { return gql.ID(wire.NodeID("PIN", r.pin.ID)) }
func (r *pinnedIssueResolver) DatabaseID() *int32              { id := int32(r.pin.ID); return &id }
func (r *pinnedIssueResolver) Repository() *repositoryResolver { return r.repo }
func (r *pinnedIssueResolver) Issue() *issueResolver {
	return &issueResolver{h: r.h, is: r.pin.Issue, repo: r.repo}
}

// PinnedBy is who pinned the issue; NOT_FOUND once that account is
// deleted (forgeapi has no ghost user).
func (r *pinnedIssueResolver) PinnedBy() (*actorResolver, error) {
	if r.pin.PinnedBy == nil {
		return nil, notFound("The account that pinned this issue was deleted.")
	}
	return r.h.actorOf(r.pin.PinnedBy), nil
}

// PinnedIssues are the repository's pinned issues, first pinned first
// (at most issues.MaxPinned): FORBIDDEN where its issues may not be
// read.
func (r *repositoryResolver) PinnedIssues(ctx context.Context, args connectionArgs) (*connection[*pinnedIssueResolver], error) {
	if !mayReadIssues(requestFrom(ctx).principal, r.r) {
		return nil, errIssuesForbidden
	}
	pins, err := r.h.Issues.Pins(ctx, r.r)
	if err != nil {
		return nil, err
	}
	list := make([]*pinnedIssueResolver, len(pins))
	for i, p := range pins {
		list[i] = &pinnedIssueResolver{h: r.h, pin: p, repo: r}
	}
	return paginate(list, args)
}

func (n *nodeResolver) ToPinnedIssue() (*pinnedIssueResolver, bool) {
	p, ok := n.node.(*pinnedIssueResolver)
	return p, ok
}

// writerOf is the caller's account when the credentials may make the
// change (mayWrite with perms) and the caller holds at least role in the
// repository; FORBIDDEN, naming the mutation, otherwise.
func (h *Handler) writerOf(ctx context.Context, repo *repositoryResolver, perms auth.Alternatives, role auth.Role, mutation string) (*accounts.Account, error) {
	p := requestFrom(ctx).principal
	if !mayWrite(p, repo.r, perms) || repo.role < role {
		return nil, refusal(p, mutation)
	}
	if repo.r.Archived {
		return nil, errArchived
	}
	return accounts.ByID(ctx, h.DB, p.UserID())
}

// pinNode resolves a PinnedIssue's id (PIN_) when the caller reads its
// repository's issues.
func (h *Handler) pinNode(ctx context.Context, id int64) (*nodeResolver, error) {
	pin, repo, err := h.Issues.PinByID(ctx, id)
	if err != nil {
		return nil, err
	}
	r, err := h.visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	if !mayReadIssues(requestFrom(ctx).principal, repo) {
		return nil, store.ErrNotFound
	}
	return &nodeResolver{&pinnedIssueResolver{h: h, pin: pin, repo: r}}, nil
}
