package graphql

import (
	"context"
	"errors"
	"net/http"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// createRepositoryInput is the CreateRepositoryInput input.
type createRepositoryInput struct {
	Name             string
	OwnerID          *gql.ID
	Description      *string
	Visibility       string
	Template         bool
	HomepageURL      *uri
	HasWikiEnabled   bool
	HasIssuesEnabled bool
	TeamID           *gql.ID
	ClientMutationID *string
}

// createRepositoryPayload resolves CreateRepositoryPayload.
type createRepositoryPayload struct {
	repository       *repositoryResolver
	clientMutationID *string
}

func (p *createRepositoryPayload) Repository() *repositoryResolver { return p.repository }
func (p *createRepositoryPayload) ClientMutationID() *string       { return p.clientMutationID }

// CreateRepository creates an empty repository through repos.Service,
// as POST /user/repos (no ownerId, or the viewer's) and POST
// /orgs/{org}/repos (an organization's ownerId) do, under those routes'
// rules (repos.CreateForUserRule, repos.CreateForOrgRule, then
// repos.CreateRefusal): the same events, webhooks and audit entries.
// INTERNAL is private, as REST makes it. The settings forgeapi does not
// keep (homepageUrl, hasIssuesEnabled, hasWikiEnabled) are ignored, as
// REST ignores them; template makes a template, as REST's is_template;
// teamId is refused (UNPROCESSABLE): forgeapi grants teams repositories
// through the teams' routes only.
func (q *root) CreateRepository(ctx context.Context, args struct{ Input createRepositoryInput }) (*createRepositoryPayload, error) {
	in := args.Input
	if in.TeamID != nil {
		return nil, unprocessable("forgeapi grants a team a repository through PUT /orgs/{org}/teams/{team_slug}/repos/{owner}/{repo}, not at creation: teamId is not supported.")
	}
	p := requestFrom(ctx).principal
	owner, role, err := q.handler(ctx).creationOwner(ctx, p, in.OwnerID)
	if err != nil {
		return nil, err
	}
	n := repos.NewRepository{Owner: owner, Name: in.Name, Private: in.Visibility != "PUBLIC", IsTemplate: in.Template}
	if in.Description != nil {
		n.Description = *in.Description
	}
	if err := n.Validate(); err != nil {
		return nil, serviceError(err)
	}
	if err := repos.CreateRefusal(p, owner, role, n.Private); err != nil {
		return nil, serviceError(err)
	}
	actor, err := accounts.ByID(ctx, q.handler(ctx).DB, p.Account.ID)
	if err != nil {
		return nil, err
	}
	repo, err := q.handler(ctx).Repos.Create(ctx, n, actor)
	if err != nil {
		return nil, serviceError(err)
	}
	r, err := q.handler(ctx).visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	return &createRepositoryPayload{repository: r, clientMutationID: in.ClientMutationID}, nil
}

// creationOwner is the account a new repository belongs to, the
// viewer's own when id is nil, with the caller's role there, once the
// REST route's rule for it passes: NOT_FOUND for an id that names no
// user or organization the caller sees, FORBIDDEN for another user or
// credentials the rule refuses.
func (h *Handler) creationOwner(ctx context.Context, p *auth.Principal, id *gql.ID) (*accounts.Account, auth.Role, error) {
	if id == nil {
		return h.checkCreationRule(ctx, p, repos.CreateForUserRule(), "", p.Account.ID, nil)
	}
	typ, dbID, ok := wire.ParseNodeID(string(*id))
	var a *accounts.Account
	err := store.ErrNotFound
	if ok && (typ == "U" || typ == "O") {
		a, err = accounts.ByID(ctx, h.DB, dbID)
	}
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && accounts.NodeID(a) != string(*id):
		return nil, auth.RoleNone, unresolved(*id)
	case err != nil:
		return nil, auth.RoleNone, err
	case a.IsOrg():
		return h.checkCreationRule(ctx, p, repos.CreateForOrgRule(), a.Login, a.ID, unresolved(*id))
	case a.ID != p.UserID():
		return nil, auth.RoleNone, refusal(p, "createRepository")
	}
	return h.checkCreationRule(ctx, p, repos.CreateForUserRule(), "", a.ID, nil)
}

// checkCreationRule applies the creation route's rule as the server
// applies it to that route (its token types, then the guard on the
// organization org, or on the caller's own account when org is ""):
// the owner's account and the caller's role there, or the route's
// refusal as a field error (hidden for its 404).
func (h *Handler) checkCreationRule(ctx context.Context, p *auth.Principal, rule auth.Rule, org string, ownerID int64, hidden error) (*accounts.Account, auth.Role, error) {
	if p.FineGrained() && !rule.TokenTypes.Allows(p.Token.Kind) {
		return nil, auth.RoleNone, forbidden(httpapi.NotAccessibleMessage(p.Token.Kind))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/orgs/{org}/repos", http.NoBody)
	if err != nil {
		return nil, auth.RoleNone, err
	}
	req.SetPathValue("org", org)
	checked, err := (&access.Guard{DB: h.DB}).Check(req, p, rule)
	if e, ok := errors.AsType[*apierr.Error](err); ok && e.Status == http.StatusNotFound && hidden != nil {
		return nil, auth.RoleNone, hidden
	} else if err != nil {
		return nil, auth.RoleNone, serviceError(err)
	}
	owner, err := accounts.ByID(ctx, h.DB, ownerID)
	return owner, auth.RoleFrom(checked), err
}
