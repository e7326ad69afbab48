package repos

import (
	"context"
	"net/http"
	"slices"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// forksQuery selects the direct forks of a repository, newest first.
const forksQuery = `SELECT ` + repoColumns + repoFrom + `WHERE r.fork_of_id = $1 ORDER BY r.created_at DESC, r.id DESC`

// listForks serves GET /repos/{owner}/{repo}/forks: the repository's
// direct forks the caller may see; sort newest (default), oldest,
// stargazers or watchers.
func (h *Handler) listForks(w http.ResponseWriter, r *http.Request) error {
	sort := r.URL.Query().Get("sort")
	r.URL.RawQuery = withoutSort(r)
	lq, err := parseList(r, "", nil, "")
	if err != nil {
		return err
	}
	candidates, err := list(r.Context(), h.Service.DB, forksQuery, From(r.Context()).ID)
	if err != nil {
		return err
	}
	switch sort {
	case "", "newest":
	case "oldest":
		slices.Reverse(candidates)
	case "stargazers", "watchers": // watchers are stargazers, as on the platform
		if err := h.sortByStars(r, candidates); err != nil {
			return err
		}
	default:
		return apierr.Invalid("", "sort", apierr.CodeInvalid)
	}
	return h.writeList(w, r, candidates, lq, func(*Repository) bool { return true })
}

// withoutSort is the request's query without sort, whose values for forks
// (newest, oldest, ...) are not parseList's.
func withoutSort(r *http.Request) string {
	q := r.URL.Query()
	q.Del("sort")
	return q.Encode()
}

// sortByStars orders repositories by their stargazers, most first (ties
// keep their order).
func (h *Handler) sortByStars(r *http.Request, list []*Repository) error {
	stars := map[int64]int{}
	for _, repo := range list {
		st, err := h.Service.Stats(r.Context(), repo.ID)
		if err != nil {
			return err
		}
		stars[repo.ID] = st.Stargazers
	}
	slices.SortStableFunc(list, func(a, b *Repository) int { return stars[b.ID] - stars[a.ID] })
	return nil
}

// forkRequest is the body of POST /repos/{owner}/{repo}/forks.
type forkRequest struct {
	Organization      string `json:"organization"`
	Name              string `json:"name"`
	DefaultBranchOnly bool   `json:"default_branch_only"`
}

// createFork serves POST /repos/{owner}/{repo}/forks: 202 with the fork,
// made at once (the platform's is asynchronous) for the caller or for the
// organization named, which the caller must be able to create
// repositories in. A user the source's owner blocks is refused (403).
// Asking again for a fork that exists answers it.
func (h *Handler) createFork(w http.ResponseWriter, r *http.Request) error {
	var body forkRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	src := From(ctx)
	actor, err := accounts.ByID(ctx, h.Service.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	if err := accounts.CheckNotBlocked(ctx, h.Service.DB, src.Owner, actor.ID); err != nil {
		return err
	}
	owner := actor
	if body.Organization != "" {
		if owner, err = h.forkOrganization(r, actor, body.Organization); err != nil {
			return err
		}
	}
	name := body.Name
	if name == "" {
		name = src.Name
	}
	if existing, err := ByOwnerAndName(ctx, h.Service.DB, owner.Login, name); err == nil && existing.ForkOfID == src.ID {
		return h.write(w, r, http.StatusAccepted, existing, auth.RoleAdmin)
	}
	fork, err := h.Service.Fork(ctx, src, owner, name, body.DefaultBranchOnly, actor)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusAccepted, fork, auth.RoleAdmin)
}

// forkOrganization is the organization a fork goes to: one the caller
// belongs to and may create repositories in (422 otherwise, as the
// platform answers an organization it cannot fork into).
func (h *Handler) forkOrganization(r *http.Request, actor *accounts.Account, login string) (*accounts.Account, error) {
	org, err := accounts.OrgByLogin(r.Context(), h.Service.DB, login)
	if err != nil {
		return nil, apierr.Invalid("Fork", "organization", apierr.CodeInvalid)
	}
	return org, h.checkCreatesIn(r, actor, org, "Fork", "organization")
}

// checkCreatesIn returns the 422 (naming resource and field) of an
// organization the actor may not create repositories in: one they are
// not an owner of, nor a member of when it lets members create them.
func (h *Handler) checkCreatesIn(r *http.Request, actor, org *accounts.Account, resource, field string) error {
	return createsIn(r.Context(), h.Service.DB, actor, org, resource, field)
}

// createsIn is checkCreatesIn over q.
func createsIn(ctx context.Context, q store.Q, actor, org *accounts.Account, resource, field string) error {
	role, err := accounts.MemberRole(ctx, q, org.ID, actor.ID)
	if err != nil {
		return err
	}
	if role == "" || role != accounts.RoleOwner && !org.MembersCanCreateRepos {
		return apierr.Custom(resource, field, "You cannot create repositories in %s.", org.Login)
	}
	return nil
}
