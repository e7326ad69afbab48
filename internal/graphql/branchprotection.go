package graphql

import (
	"context"
	"errors"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/protection"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// branchProtectionRuleResolver resolves BranchProtectionRule: a branch's
// protection as the REST API set it, its pattern the branch's name.
type branchProtectionRuleResolver struct {
	repo *repositoryResolver
	p    *protection.Protection
}

// BranchProtectionRule is the protection of a branch; null for other
// references and unprotected branches.
func (r *refResolver) BranchProtectionRule(ctx context.Context) (*branchProtectionRuleResolver, error) {
	if r.prefix != "refs/heads/" {
		return nil, nil
	}
	p, err := protection.Of(ctx, r.repo.h.DB, r.repo.r.ID, r.name)
	if errors.Is(err, protection.ErrNotProtected) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &branchProtectionRuleResolver{repo: r.repo, p: p}, nil
}

// BranchProtectionRules are the repository's protections, oldest first.
func (r *repositoryResolver) BranchProtectionRules(ctx context.Context, args connectionArgs) (*connection[*branchProtectionRuleResolver], error) {
	if err := args.checkCounted("branchProtectionRules"); err != nil {
		return nil, err
	}
	all, err := protection.List(ctx, r.h.DB, r.r.ID)
	if err != nil {
		return nil, err
	}
	list := make([]*branchProtectionRuleResolver, len(all))
	for i, p := range all {
		list[i] = &branchProtectionRuleResolver{repo: r, p: p}
	}
	return pageList(list, args, "branchProtectionRules")
}

func (r *branchProtectionRuleResolver) st() protection.Settings { return r.p.Settings }

// ID is the rule's node id.
func (r *branchProtectionRuleResolver) ID() gql.ID {
	return gql.ID(wire.NodeID("BPR", r.p.ID))
}

func (r *branchProtectionRuleResolver) DatabaseID() *int32 { id := int32(r.p.ID); return &id }
func (r *branchProtectionRuleResolver) Pattern() string    { return r.p.Branch }
func (r *branchProtectionRuleResolver) Repository() *repositoryResolver {
	return r.repo
}
func (r *branchProtectionRuleResolver) AllowsDeletions() bool         { return r.st().Deletions }
func (r *branchProtectionRuleResolver) AllowsForcePushes() bool       { return r.st().ForcePushes }
func (r *branchProtectionRuleResolver) BlocksCreations() bool         { return r.st().BlockCreations }
func (r *branchProtectionRuleResolver) IsAdminEnforced() bool         { return r.st().EnforceAdmins }
func (r *branchProtectionRuleResolver) LockBranch() bool              { return r.st().LockBranch }
func (r *branchProtectionRuleResolver) LockAllowsFetchAndMerge() bool { return r.st().ForkSyncing }
func (r *branchProtectionRuleResolver) RequiresCommitSignatures() bool {
	return r.st().Signatures
}
func (r *branchProtectionRuleResolver) RequiresConversationResolution() bool {
	return r.st().ConversationResolution
}
func (r *branchProtectionRuleResolver) RequiresLinearHistory() bool { return r.st().LinearHistory }
func (r *branchProtectionRuleResolver) RestrictsPushes() bool       { return r.st().Restrictions != nil }

// RequiresApprovingReviews is whether pull request reviews are required.
func (r *branchProtectionRuleResolver) RequiresApprovingReviews() bool { return r.st().Reviews != nil }

// RequiredApprovingReviewCount is null without required reviews.
func (r *branchProtectionRuleResolver) RequiredApprovingReviewCount() *int32 {
	if r.st().Reviews == nil {
		return nil
	}
	n := int32(r.st().Reviews.Count)
	return &n
}

func (r *branchProtectionRuleResolver) reviews() protection.Reviews {
	if r.st().Reviews == nil {
		return protection.Reviews{}
	}
	return *r.st().Reviews
}

func (r *branchProtectionRuleResolver) DismissesStaleReviews() bool    { return r.reviews().DismissStale }
func (r *branchProtectionRuleResolver) RequiresCodeOwnerReviews() bool { return r.reviews().CodeOwners }
func (r *branchProtectionRuleResolver) RequireLastPushApproval() bool  { return r.reviews().LastPush }
func (r *branchProtectionRuleResolver) RestrictsReviewDismissals() bool {
	return r.reviews().Dismissal != nil
}

// RequiresStatusChecks is whether status checks are required.
func (r *branchProtectionRuleResolver) RequiresStatusChecks() bool { return r.st().StatusChecks != nil }

// RequiresStrictStatusChecks is whether the head must be up to date.
func (r *branchProtectionRuleResolver) RequiresStrictStatusChecks() bool {
	return r.st().StatusChecks != nil && r.st().StatusChecks.Strict
}

// RequiredStatusCheckContexts are the required checks' names.
func (r *branchProtectionRuleResolver) RequiredStatusCheckContexts() *[]*string {
	out := []*string{}
	if c := r.st().StatusChecks; c != nil {
		for _, name := range c.Contexts() {
			out = append(out, &name)
		}
	}
	return &out
}

// branchProtectionNode is the rule with the database id, in a
// repository the caller sees; store.ErrNotFound otherwise.
func (h *Handler) branchProtectionNode(ctx context.Context, id int64) (*nodeResolver, error) {
	p, err := protection.ByID(ctx, h.DB, id)
	if errors.Is(err, protection.ErrNotProtected) {
		return nil, store.ErrNotFound
	} else if err != nil {
		return nil, err
	}
	repo, err := repos.ByID(ctx, h.DB, p.RepoID)
	if err != nil {
		return nil, err
	}
	r, err := h.visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	return &nodeResolver{&branchProtectionRuleResolver{repo: r, p: p}}, nil
}
