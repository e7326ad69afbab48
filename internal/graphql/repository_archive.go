package graphql

import (
	"context"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
)

// adminWrite is what archiving needs of a permission-based token, as
// PATCH /repos/{owner}/{repo}: Administration write.
var adminWrite = auth.Perm("administration:write")

// archiveInput is the ArchiveRepositoryInput and
// UnarchiveRepositoryInput inputs.
type archiveInput struct {
	RepositoryID     gql.ID
	ClientMutationID *string
}

// archivePayload resolves ArchiveRepositoryPayload and
// UnarchiveRepositoryPayload.
type archivePayload struct {
	repo             *repositoryResolver
	clientMutationID *string
}

func (p *archivePayload) Repository() *repositoryResolver { return p.repo }
func (p *archivePayload) ClientMutationID() *string       { return p.clientMutationID }

// ArchiveRepository archives a repository through repos.Service.Update,
// as PATCH /repos/{owner}/{repo} with archived true: the repository
// webhook (archived) and audit entry in the same transaction; admins
// only, with repo or public_repo of a classic token, Administration
// write of a fine-grained one. Archiving an archived one changes
// nothing.
func (q *root) ArchiveRepository(ctx context.Context, args struct{ Input archiveInput }) (*archivePayload, error) {
	return q.handler(ctx).archive(ctx, args.Input, true, "ArchiveRepository")
}

// UnarchiveRepository makes an archived repository writable again, as
// PATCH /repos/{owner}/{repo} with archived false.
func (q *root) UnarchiveRepository(ctx context.Context, args struct{ Input archiveInput }) (*archivePayload, error) {
	return q.handler(ctx).archive(ctx, args.Input, false, "UnarchiveRepository")
}

// archive sets the input's repository's archived flag.
func (h *Handler) archive(ctx context.Context, in archiveInput, archived bool, mutation string) (*archivePayload, error) {
	r, err := h.repositoryOfID(ctx, in.RepositoryID)
	if err != nil {
		return nil, err
	}
	p := requestFrom(ctx).principal
	if !mayWrite(p, r.r, adminWrite) || r.role < auth.RoleAdmin {
		return nil, refusal(p, mutation)
	}
	actor, err := accounts.ByID(ctx, h.DB, p.UserID())
	if err != nil {
		return nil, err
	}
	repo, err := h.Repos.Update(ctx, r.r, repos.Changes{Archived: &archived}, actor)
	if err != nil {
		return nil, serviceError(err)
	}
	r, err = h.visibleRepository(ctx, repo)
	if err != nil {
		return nil, err
	}
	return &archivePayload{repo: r, clientMutationID: in.ClientMutationID}, nil
}
