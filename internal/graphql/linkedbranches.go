package graphql

import (
	"context"
	"errors"
	"strconv"
	"strings"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/auth"
	"forgeapi/internal/githost"
	"forgeapi/internal/issues"
	"forgeapi/internal/repocontent"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// linkedBranchType is the node id type of a LinkedBranch (LB_...).
const linkedBranchType = "LB"

// branchWrite is what creating or unlinking a linked branch needs of a
// permission-based token in the branch's repository, as POST
// .../git/refs: Contents write.
var branchWrite = auth.Perm("contents:write")

// linkedBranchResolver resolves LinkedBranch: a link of an issue to a
// branch of repo, a repository the caller sees.
type linkedBranchResolver struct {
	lb   *issues.LinkedBranch
	repo *repositoryResolver
}

// ID is the link's node id.
func (r *linkedBranchResolver) ID() gql.ID { return gql.ID(wire.NodeID(linkedBranchType, r.lb.ID)) }

// Ref is the linked branch: null when it is not there (deleted by a
// push the link has not followed yet); FORBIDDEN when the credentials
// may not read the repository's contents.
func (r *linkedBranchResolver) Ref(ctx context.Context) (*refResolver, error) {
	if err := r.repo.checkContents(ctx); err != nil {
		return nil, err
	}
	return r.repo.refNamed("refs/heads/" + r.lb.Branch)
}

func (n *nodeResolver) ToLinkedBranch() (*linkedBranchResolver, bool) {
	b, ok := n.node.(*linkedBranchResolver)
	return b, ok
}

// branchRepository is the repository of id as the caller sees it, known
// resolves it without a query when it is that one; store.ErrNotFound
// when the caller does not see it.
func (h *Handler) branchRepository(ctx context.Context, id int64, known *repositoryResolver) (*repositoryResolver, error) {
	if known != nil && known.r.ID == id {
		return known, nil
	}
	repo, err := repos.ByID(ctx, h.DB, id)
	if err != nil {
		return nil, err
	}
	return h.visibleRepository(ctx, repo)
}

// LinkedBranches are the branches linked to the issue, first linked
// first; those in a repository the caller does not see are left out.
func (r *issueResolver) LinkedBranches(ctx context.Context, args connectionArgs) (*connection[*linkedBranchResolver], error) {
	if err := args.checkCounted("linkedBranches"); err != nil {
		return nil, err
	}
	links, err := r.h.Issues.LinkedBranches(ctx, r.is.ID)
	if err != nil {
		return nil, err
	}
	list := make([]*linkedBranchResolver, 0, len(links))
	for _, lb := range links {
		repo, err := r.h.branchRepository(ctx, lb.RepoID, r.repo)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		list = append(list, &linkedBranchResolver{lb: lb, repo: repo})
	}
	return pageList(list, args, "linkedBranches")
}

// linkedBranchNode resolves a LinkedBranch id (LB_) when the caller reads
// its issue and sees its branch's repository; store.ErrNotFound
// otherwise.
func (h *Handler) linkedBranchNode(ctx context.Context, id int64) (*nodeResolver, error) {
	lb, _, err := h.linkedBranch(ctx, id)
	if err != nil {
		return nil, err
	}
	return &nodeResolver{lb}, nil
}

// linkedBranch is the link of id with its issue, when the caller reads
// the issue and sees the branch's repository; store.ErrNotFound
// otherwise.
func (h *Handler) linkedBranch(ctx context.Context, id int64) (*linkedBranchResolver, *issueTarget, error) {
	lb, err := h.Issues.LinkedBranchByID(ctx, id)
	if err != nil {
		return nil, nil, err
	}
	t, err := h.target(ctx, gql.ID(wire.NodeID("I", lb.IssueID)), false)
	if err != nil {
		return nil, nil, store.ErrNotFound
	}
	repo, err := h.branchRepository(ctx, lb.RepoID, t.repo)
	if err != nil {
		return nil, nil, err
	}
	return &linkedBranchResolver{lb: lb, repo: repo}, t, nil
}

// createLinkedBranchInput is the CreateLinkedBranchInput input.
type createLinkedBranchInput struct {
	IssueID          gql.ID
	Name             *string
	Oid              gitObjectID
	RepositoryID     *gql.ID
	ClientMutationID *string
}

// linkedBranchPayload resolves CreateLinkedBranchPayload and
// DeleteLinkedBranchPayload.
type linkedBranchPayload struct {
	issue            *issueResolver
	linkedBranch     *linkedBranchResolver
	clientMutationID *string
}

func (p *linkedBranchPayload) Issue() *issueResolver               { return p.issue }
func (p *linkedBranchPayload) LinkedBranch() *linkedBranchResolver { return p.linkedBranch }
func (p *linkedBranchPayload) ClientMutationID() *string           { return p.clientMutationID }

// CreateLinkedBranch creates a branch at oid in the repository
// (repositoryId, the issue's by default) and links it to the issue: the
// branch is named name, or the issue's number and title
// (issues.LinkedBranchName). The branch is made as POST .../git/refs
// makes it (repocontent.CreateRef: its refusals, the push checks,
// events and webhooks), and the link in the transaction that records
// the push (issues.LinkedBranchIntent). The caller reads the issue and
// has push access to the repository (Contents write of a
// permission-based token that selects it): FORBIDDEN otherwise.
func (q *root) CreateLinkedBranch(ctx context.Context, args struct{ Input createLinkedBranchInput }) (*linkedBranchPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	t, err := h.target(ctx, in.IssueID, false)
	if err != nil {
		return nil, err
	}
	repo := t.repo
	if in.RepositoryID != nil {
		if repo, err = h.repositoryOfID(ctx, *in.RepositoryID); err != nil {
			return nil, err
		}
	}
	actor, err := h.writerOf(ctx, repo, branchWrite, auth.RoleWrite, "CreateLinkedBranch")
	if err != nil {
		return nil, err
	}
	name := issues.LinkedBranchName(t.number(), t.is.Title)
	if in.Name != nil && strings.TrimPrefix(*in.Name, "refs/heads/") != "" {
		name = strings.TrimPrefix(*in.Name, "refs/heads/")
	}
	intent := githost.PushIntent{Kind: issues.LinkedBranchIntent, Subject: strconv.FormatInt(t.is.ID, 10)}
	if _, err := repocontent.CreateRef(ctx, h.Git, repo.r, actor, "refs/heads/"+name, string(in.Oid), intent); err != nil {
		return nil, serviceError(err)
	}
	out := &linkedBranchPayload{clientMutationID: in.ClientMutationID}
	lb, err := h.Issues.LinkedBranchOf(ctx, t.is.ID, repo.r.ID, name)
	switch {
	case err == nil:
		out.linkedBranch = &linkedBranchResolver{lb: lb, repo: repo}
	case !errors.Is(err, store.ErrNotFound): // not recorded yet: left to the push recovery
		return nil, err
	}
	if t, err = h.reload(ctx, t); err != nil {
		return nil, err
	}
	out.issue = &issueResolver{h: h, is: t.is, repo: t.repo}
	return out, nil
}

// deleteLinkedBranchInput is the DeleteLinkedBranchInput input.
type deleteLinkedBranchInput struct {
	LinkedBranchID   gql.ID
	ClientMutationID *string
}

// DeleteLinkedBranch unlinks a branch from its issue, leaving the branch
// as it is. It needs what creating the link needs: push access to the
// branch's repository (Contents write of a permission-based token).
func (q *root) DeleteLinkedBranch(ctx context.Context, args struct{ Input deleteLinkedBranchInput }) (*linkedBranchPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	typ, dbID, ok := wire.ParseNodeID(string(in.LinkedBranchID))
	if !ok || typ != linkedBranchType {
		return nil, unresolved(in.LinkedBranchID)
	}
	lb, t, err := h.linkedBranch(ctx, dbID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, unresolved(in.LinkedBranchID)
	} else if err != nil {
		return nil, err
	}
	if _, err := h.writerOf(ctx, lb.repo, branchWrite, auth.RoleWrite, "DeleteLinkedBranch"); err != nil {
		return nil, err
	}
	if err := h.Issues.UnlinkBranch(ctx, lb.lb.ID); errors.Is(err, store.ErrNotFound) {
		return nil, unresolved(in.LinkedBranchID)
	} else if err != nil {
		return nil, err
	}
	if t, err = h.reload(ctx, t); err != nil {
		return nil, err
	}
	return &linkedBranchPayload{issue: &issueResolver{h: h, is: t.is, repo: t.repo}, clientMutationID: in.ClientMutationID}, nil
}
