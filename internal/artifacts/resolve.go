package artifacts

import (
	"context"
	"errors"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Why a deployment's repository could not be used, as the platform's
// errors[].cause names it.
const (
	causeNotFound     = "not_found"    // no such repository in the organization, or hidden from the caller
	causeUnauthorized = "unauthorized" // the caller may see but not write the repository
)

// repoResolver finds the organization's repositories by name and the
// caller's role on each, once per name per request.
type repoResolver struct {
	ctx   context.Context
	q     store.Q
	p     *auth.Principal
	org   *accounts.Account
	cache map[string]resolvedRepo
}

type resolvedRepo struct {
	repo *repos.Repository
	role auth.Role
}

func newRepoResolver(ctx context.Context, q store.Q, p *auth.Principal, org *accounts.Account) *repoResolver {
	return &repoResolver{ctx: ctx, q: q, p: p, org: org, cache: map[string]resolvedRepo{}}
}

// forWrite returns the repository named name in the organization for
// writing a record, or the cause that refuses it: not_found when it does
// not exist or the caller cannot see it, unauthorized when the caller
// cannot write it. An empty name means no repository: (nil, "").
func (r *repoResolver) forWrite(name string) (*repos.Repository, string, error) {
	if name == "" {
		return nil, "", nil
	}
	res, err := r.lookup(name)
	switch {
	case err != nil:
		return nil, "", err
	case res.role == auth.RoleNone:
		return nil, causeNotFound, nil
	case res.role < auth.RoleWrite:
		return nil, causeUnauthorized, nil
	}
	return res.repo, "", nil
}

func (r *repoResolver) lookup(name string) (resolvedRepo, error) {
	if res, ok := r.cache[name]; ok {
		return res, nil
	}
	repo, err := repos.ByOwnerAndName(r.ctx, r.q, r.org.Login, name)
	if errors.Is(err, store.ErrNotFound) {
		r.cache[name] = resolvedRepo{}
		return resolvedRepo{}, nil
	}
	if err != nil {
		return resolvedRepo{}, err
	}
	role, err := access.RepoRole(r.ctx, r.q, r.p, repo)
	if err != nil {
		return resolvedRepo{}, err
	}
	res := resolvedRepo{repo: repo, role: role}
	r.cache[name] = res
	return res, nil
}

// roleByID returns the caller's role on the repository with the id,
// once per id per request (RoleNone when it no longer exists).
func roleByID(ctx context.Context, q store.Q, p *auth.Principal, id int64, cache map[int64]auth.Role) (auth.Role, error) {
	if role, ok := cache[id]; ok {
		return role, nil
	}
	repo, err := repos.ByID(ctx, q, id)
	if errors.Is(err, store.ErrNotFound) {
		cache[id] = auth.RoleNone
		return auth.RoleNone, nil
	}
	if err != nil {
		return auth.RoleNone, err
	}
	role, err := access.RepoRole(ctx, q, p, repo)
	if err != nil {
		return auth.RoleNone, err
	}
	cache[id] = role
	return role, nil
}
