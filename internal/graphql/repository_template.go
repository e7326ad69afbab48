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

// cloneTemplateRepositoryInput is the CloneTemplateRepositoryInput input.
type cloneTemplateRepositoryInput struct {
	RepositoryID       gql.ID
	Name               string
	OwnerID            gql.ID
	Description        *string
	Visibility         string
	IncludeAllBranches bool
	ClientMutationID   *string
}

// cloneTemplateRepositoryPayload resolves CloneTemplateRepositoryPayload.
type cloneTemplateRepositoryPayload struct {
	repository       *repositoryResolver
	clientMutationID *string
}

func (p *cloneTemplateRepositoryPayload) Repository() *repositoryResolver { return p.repository }
func (p *cloneTemplateRepositoryPayload) ClientMutationID() *string       { return p.clientMutationID }

// CloneTemplateRepository makes a repository of a template through
// repos.Service.GenerateFor, as POST
// /repos/{template_owner}/{template_repo}/generate does, under that
// route's rule (repos.GenerateRule, on the template): the same commits,
// pushes, events and webhooks. ownerId names the viewer or an
// organization the viewer may create repositories in; INTERNAL is
// private, as REST makes it. NOT_FOUND for a template or owner the
// caller does not see, FORBIDDEN for another user or credentials the
// rule refuses, UNPROCESSABLE for what REST answers 422 (a repository
// that is not a template, a name taken).
func (q *root) CloneTemplateRepository(ctx context.Context, args struct {
	Input cloneTemplateRepositoryInput
}) (*cloneTemplateRepositoryPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	p := requestFrom(ctx).principal
	tmpl, err := h.repositoryOfID(ctx, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	if err := h.checkRepoRule(ctx, p, repos.GenerateRule(), tmpl.r, unresolved(in.RepositoryID)); err != nil {
		return nil, err
	}
	owner, err := h.accountOfID(ctx, in.OwnerID)
	if err != nil {
		return nil, err
	}
	if !owner.IsOrg() && owner.ID != p.UserID() {
		return nil, refusal(p, "cloneTemplateRepository")
	}
	g := repos.Generation{Owner: owner.Login, Name: in.Name, IncludeAllBranches: in.IncludeAllBranches, Private: in.Visibility != "PUBLIC"}
	if in.Description != nil {
		g.Description = *in.Description
	}
	repo, err := h.Repos.GenerateFor(ctx, p, tmpl.r, g)
	if err != nil {
		return nil, serviceError(err)
	}
	r, err := h.visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	return &cloneTemplateRepositoryPayload{repository: r, clientMutationID: in.ClientMutationID}, nil
}

// repositoryOfID is the repository a node id names as the caller sees
// it: NOT_FOUND when it names none the caller sees.
func (h *Handler) repositoryOfID(ctx context.Context, id gql.ID) (*repositoryResolver, error) {
	typ, dbID, ok := wire.ParseNodeID(string(id))
	if !ok || typ != "R" {
		return nil, unresolved(id)
	}
	repo, err := repos.ByID(ctx, h.DB, dbID)
	var r *repositoryResolver
	if err == nil {
		r, err = h.visibleRepository(ctx, repo)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, unresolved(id)
	}
	return r, err
}

// accountOfID is the user or organization a node id names: NOT_FOUND
// when it names none.
func (h *Handler) accountOfID(ctx context.Context, id gql.ID) (*accounts.Account, error) {
	typ, dbID, ok := wire.ParseNodeID(string(id))
	if !ok || typ != "U" && typ != "O" {
		return nil, unresolved(id)
	}
	a, err := accounts.ByID(ctx, h.DB, dbID)
	switch {
	case errors.Is(err, store.ErrNotFound) || err == nil && accounts.NodeID(a) != string(id):
		return nil, unresolved(id)
	case err != nil:
		return nil, err
	}
	return a, nil
}

// checkRepoRule applies a repository route's write rule to repo as the
// server applies it to that route (its token types, then the guard): the
// route's refusal as a field error, hidden (the NOT_FOUND to answer) for
// its 404.
func (h *Handler) checkRepoRule(ctx context.Context, p *auth.Principal, rule auth.Rule, repo *repos.Repository, hidden error) error {
	if p.FineGrained() && !rule.TokenTypes.Allows(p.Token.Kind) {
		return forbidden(httpapi.NotAccessibleMessage(p.Token.Kind))
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "/repos/{owner}/{repo}", http.NoBody)
	if err != nil {
		return err
	}
	req.SetPathValue("owner", repo.Owner.Login)
	req.SetPathValue("repo", repo.Name)
	_, err = (&access.Guard{DB: h.DB}).Check(req, p, rule)
	if e, ok := errors.AsType[*apierr.Error](err); ok && e.Status == http.StatusNotFound {
		return hidden
	} else if err != nil {
		return serviceError(err)
	}
	return nil
}
