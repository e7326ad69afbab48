package graphql

import (
	"context"
	"errors"
	"fmt"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/accounts"
	"forgeapi/internal/gists"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// node resolves a node id (the REST node_id) to its object when the
// caller sees it: users (bots too, which the viewer of an installation
// token is), organizations, repositories, pull requests and their
// reviews, review comments and review threads, and issues, their comments, labels and milestones (issueNode),
// pinned issues (pinNode), issues' linked branches (linkedBranchNode),
// and commits, references, trees, blobs and annotated tags (gitNode),
// and gists, which anyone sees by their id (gistNode).
// Any other id, or an object hidden from the caller, is NOT_FOUND.
func (h *Handler) node(ctx context.Context, id string) (*nodeResolver, error) {
	n, err := h.lookup(ctx, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id))
	}
	return n, err
}

// lookup is node without the error's message.
func (h *Handler) lookup(ctx context.Context, id string) (*nodeResolver, error) {
	if n, ok, err := h.gitNode(ctx, id); ok {
		return n, err
	}
	typ, dbID, ok := wire.ParseNodeID(id)
	if !ok {
		return nil, store.ErrNotFound
	}
	switch typ {
	case "U", "O", "BOT":
		a, err := accounts.ByID(ctx, h.DB, dbID)
		if err != nil {
			return nil, err
		}
		if accounts.NodeID(a) != id {
			return nil, store.ErrNotFound
		}
		return &nodeResolver{h.owner(a).repositoryOwner}, nil
	case "R":
		repo, err := repos.ByID(ctx, h.DB, dbID)
		if err != nil {
			return nil, err
		}
		r, err := h.visibleRepository(ctx, repo)
		if err != nil {
			return nil, err
		}
		return &nodeResolver{r}, nil
	case "PR":
		p, err := h.pullByNodeID(ctx, id)
		if err != nil {
			return nil, err
		}
		return &nodeResolver{p}, nil
	case "I", "IC", "LA", "MI":
		return h.issueNode(ctx, typ, dbID)
	case "DE", "DES", "EN":
		return h.deploymentNode(ctx, typ, dbID)
	case "PRR":
		r, err := h.reviewByID(ctx, dbID)
		if err != nil {
			return nil, err
		}
		return &nodeResolver{r}, nil
	case "PRRC":
		c, err := h.reviewCommentByID(ctx, dbID)
		if err != nil {
			return nil, err
		}
		return &nodeResolver{c}, nil
	case "PRRT":
		t, err := h.threadByRoot(ctx, dbID)
		if err != nil {
			return nil, err
		}
		return &nodeResolver{t}, nil
	case "BPR":
		return h.branchProtectionNode(ctx, dbID)
	case "REA":
		return h.reactionNode(ctx, dbID)
	case "PIN":
		return h.pinNode(ctx, dbID)
	case linkedBranchType:
		return h.linkedBranchNode(ctx, dbID)
	case "RE":
		return h.releaseNode(ctx, dbID)
	case gists.NodeType:
		return h.gistNode(ctx, dbID)
	}
	return nil, store.ErrNotFound
}

// node is what every object resolves of the Node interface.
type node interface {
	ID() gql.ID
}

// nodeResolver resolves Node.
type nodeResolver struct{ node }

func (n *nodeResolver) ToUser() (*userResolver, bool) {
	u, ok := n.node.(*userResolver)
	return u, ok
}

func (n *nodeResolver) ToOrganization() (*organizationResolver, bool) {
	o, ok := n.node.(*organizationResolver)
	return o, ok
}

func (n *nodeResolver) ToRepository() (*repositoryResolver, bool) {
	r, ok := n.node.(*repositoryResolver)
	return r, ok
}

func (n *nodeResolver) ToPullRequest() (*pullRequestResolver, bool) {
	p, ok := n.node.(*pullRequestResolver)
	return p, ok
}

func (n *nodeResolver) ToReaction() (*reactionResolver, bool) {
	r, ok := n.node.(*reactionResolver)
	return r, ok
}

func (n *nodeResolver) ToIssue() (*issueResolver, bool) {
	i, ok := n.node.(*issueResolver)
	return i, ok
}

func (n *nodeResolver) ToIssueComment() (*commentResolver, bool) {
	c, ok := n.node.(*commentResolver)
	return c, ok
}

func (n *nodeResolver) ToBranchProtectionRule() (*branchProtectionRuleResolver, bool) {
	r, ok := n.node.(*branchProtectionRuleResolver)
	return r, ok
}

func (n *nodeResolver) ToLabel() (*labelResolver, bool) {
	l, ok := n.node.(*labelResolver)
	return l, ok
}

func (n *nodeResolver) ToRelease() (*releaseResolver, bool) {
	r, ok := n.node.(*releaseResolver)
	return r, ok
}

func (n *nodeResolver) ToDeployment() (*deploymentResolver, bool) {
	d, ok := n.node.(*deploymentResolver)
	return d, ok
}

func (n *nodeResolver) ToDeploymentStatus() (*deploymentStatusResolver, bool) {
	s, ok := n.node.(*deploymentStatusResolver)
	return s, ok
}

func (n *nodeResolver) ToEnvironment() (*environmentResolver, bool) {
	e, ok := n.node.(*environmentResolver)
	return e, ok
}

func (n *nodeResolver) ToMilestone() (*milestoneResolver, bool) {
	m, ok := n.node.(*milestoneResolver)
	return m, ok
}

// ToRepositoryOwner is the node as a RepositoryOwner, for fragments on
// the interface.
func (n *nodeResolver) ToRepositoryOwner() (*ownerResolver, bool) {
	o, ok := n.node.(repositoryOwner)
	if !ok {
		return nil, false
	}
	return &ownerResolver{o}, true
}
