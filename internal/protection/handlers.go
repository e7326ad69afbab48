package protection

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/apps"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/teams"
)

// Handler serves the branch protection endpoints.
type Handler struct {
	Service *Service
	Repos   *repos.Service
}

// The 404 messages of the platform.
var (
	errBranchNotFound           = apierr.New(http.StatusNotFound, "Branch not found")
	errNotProtected             = apierr.New(http.StatusNotFound, "Branch not protected")
	errChecksOff                = apierr.New(http.StatusNotFound, "Required status checks not enabled")
	errReviewsOff               = apierr.New(http.StatusNotFound, "Required pull request reviews not enabled")
	errRestrictionsOff          = apierr.New(http.StatusNotFound, "Push restrictions not enabled")
	errOrgRestrictions          = apierr.Unprocessable("Only organization repositories can have users and team restrictions")
	errRestrictionsOffForChange = apierr.Unprocessable("Push restrictions not enabled")
)

// branch returns the route's branch name, a 404 when the repository has
// no such branch.
func (h *Handler) branch(r *http.Request) (string, error) {
	name := r.PathValue("branch")
	if !gitref.ValidBranch(name) {
		return "", errBranchNotFound
	}
	g, err := gitread.Open(h.Repos.GitDir(repos.From(r.Context()).ID))
	if err != nil {
		return "", errBranchNotFound
	}
	defer g.Close()
	_, ok, err := g.RefTarget("refs/heads/" + name)
	if err != nil {
		return "", err
	}
	if !ok {
		return "", errBranchNotFound
	}
	return name, nil
}

// current returns the route's branch and its protection (404s when the
// branch or its protection is missing).
func (h *Handler) current(r *http.Request) (string, *Protection, error) {
	name, err := h.branch(r)
	if err != nil {
		return "", nil, err
	}
	p, err := Of(r.Context(), h.Service.DB, repos.From(r.Context()).ID, name)
	if errors.Is(err, ErrNotProtected) {
		return "", nil, errNotProtected
	}
	return name, p, err
}

func (h *Handler) renderer(r *http.Request, branch string) *renderer {
	return newRenderer(h.Service.DB, httpapi.BaseURL(r.Context()), repos.From(r.Context()), branch)
}

// view answers a read of the protection with what show renders of it.
func (h *Handler) view(show func(ctx context.Context, rd *renderer, st Settings) (any, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		name, p, err := h.current(r)
		if err != nil {
			return err
		}
		j, err := show(r.Context(), h.renderer(r, name), p.Settings)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, j)
		return nil
	}
}

// edit answers a change of the protection: decode reads the request into
// a Change, which Update applies (creating the protection when create);
// the answer is what show renders of the result, or 204 when show is
// nil.
func (h *Handler) edit(create bool, decode func(r *http.Request) (Change, error),
	show func(ctx context.Context, rd *renderer, st Settings) (any, error)) func(http.ResponseWriter, *http.Request) error {
	return func(w http.ResponseWriter, r *http.Request) error {
		name, err := h.branch(r)
		if err != nil {
			return err
		}
		change, err := decode(r)
		if err != nil {
			return err
		}
		actor, err := h.actor(r)
		if err != nil {
			return err
		}
		p, err := h.Service.Update(r.Context(), repos.From(r.Context()), actor, name, create, change)
		if errors.Is(err, ErrNotProtected) {
			return errNotProtected
		} else if err != nil {
			return err
		}
		if show == nil {
			httpapi.NoContent(w)
			return nil
		}
		j, err := show(r.Context(), h.renderer(r, name), p.Settings)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, j)
		return nil
	}
}

func (h *Handler) actor(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// noBody is the decoder of a request without a body.
func noBody(fn Change) func(*http.Request) (Change, error) {
	return func(*http.Request) (Change, error) { return fn, nil }
}

// deleteProtection answers DELETE .../protection: 204.
func (h *Handler) deleteProtection(w http.ResponseWriter, r *http.Request) error {
	name, err := h.branch(r)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	err = h.Service.Delete(r.Context(), repos.From(r.Context()), actor, name)
	if errors.Is(err, ErrNotProtected) {
		return errNotProtected
	} else if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// Renderings of the sub-resources.

func showAll(ctx context.Context, rd *renderer, st Settings) (any, error) {
	return rd.protection(ctx, st)
}

func showAdmins(_ context.Context, rd *renderer, st Settings) (any, error) {
	return rd.flag("/enforce_admins", st.EnforceAdmins), nil
}

func showSignatures(_ context.Context, rd *renderer, st Settings) (any, error) {
	return rd.flag("/required_signatures", st.Signatures), nil
}

func showReviews(ctx context.Context, rd *renderer, st Settings) (any, error) {
	if st.Reviews == nil {
		return nil, errReviewsOff
	}
	return rd.reviews(ctx, st.Reviews)
}

func showChecks(_ context.Context, rd *renderer, st Settings) (any, error) {
	if st.StatusChecks == nil {
		return nil, errChecksOff
	}
	return rd.statusChecks(st.StatusChecks), nil
}

func showContexts(_ context.Context, _ *renderer, st Settings) (any, error) {
	if st.StatusChecks == nil {
		return nil, errChecksOff
	}
	return st.StatusChecks.Contexts(), nil
}

func showRestrictions(ctx context.Context, rd *renderer, st Settings) (any, error) {
	if st.Restrictions == nil {
		return nil, errRestrictionsOff
	}
	return rd.restrictions(ctx, st.Restrictions)
}

// showActors renders one kind of the restrictions' actors.
func showActors(kind string) func(ctx context.Context, rd *renderer, st Settings) (any, error) {
	return func(ctx context.Context, rd *renderer, st Settings) (any, error) {
		if st.Restrictions == nil {
			return nil, errRestrictionsOff
		}
		j, err := rd.actors(ctx, st.Restrictions)
		if err != nil {
			return nil, err
		}
		switch kind {
		case "users":
			return j.Users, nil
		case "teams":
			return j.Teams, nil
		}
		return j.Apps, nil
	}
}

// Changes without a body.

func setAdmins(on bool) Change {
	return func(_ store.Q, s *Settings) error { s.EnforceAdmins = on; return nil }
}

func setSignatures(on bool) Change {
	return func(_ store.Q, s *Settings) error { s.Signatures = on; return nil }
}

func dropReviews(_ store.Q, s *Settings) error {
	if s.Reviews == nil {
		return errReviewsOff
	}
	s.Reviews = nil
	return nil
}

func dropChecks(_ store.Q, s *Settings) error {
	s.StatusChecks = nil
	return nil
}

func dropRestrictions(_ store.Q, s *Settings) error {
	s.Restrictions = nil
	return nil
}

// resolver turns logins and slugs of a request into actors of the route's
// repository.
type resolver struct {
	ctx  context.Context
	q    store.Q
	repo *repos.Repository
}

// resolver returns the request's resolver, which reads through q: the
// caller's transaction when it has one, else the service's DB.
func (h *Handler) resolver(r *http.Request, q store.Q) resolver {
	return resolver{ctx: r.Context(), q: q, repo: repos.From(r.Context())}
}

// actorsRequest names users (logins), teams (slugs) and apps (slugs).
type actorsRequest struct {
	Users []string `json:"users"`
	Teams []string `json:"teams"`
	Apps  []string `json:"apps"`
}

// actors resolves the request: users and teams only for an
// organization's repository (422), each name known (422 naming it).
func (rs resolver) actors(a *actorsRequest) (*Actors, error) {
	out := &Actors{Users: []int64{}, Teams: []int64{}, Apps: []int64{}}
	if a == nil {
		return out, nil
	}
	var err error
	if out.Users, err = rs.users(a.Users); err != nil {
		return nil, err
	}
	if out.Teams, err = rs.teams(a.Teams); err != nil {
		return nil, err
	}
	out.Apps, err = rs.apps(a.Apps)
	return out, err
}

func (rs resolver) users(logins []string) ([]int64, error) {
	ids := []int64{}
	if len(logins) > 0 && !rs.repo.Owner.IsOrg() {
		return nil, errOrgRestrictions
	}
	for _, l := range logins {
		u, err := accounts.UserByLogin(rs.ctx, rs.q, l)
		if errors.Is(err, store.ErrNotFound) {
			return nil, apierr.Unprocessable("Validation Failed: user %q not found", l)
		} else if err != nil {
			return nil, err
		}
		ids = appendNew(ids, u.ID)
	}
	return ids, nil
}

func (rs resolver) teams(slugs []string) ([]int64, error) {
	ids := []int64{}
	if len(slugs) > 0 && !rs.repo.Owner.IsOrg() {
		return nil, errOrgRestrictions
	}
	for _, sl := range slugs {
		t, err := teams.BySlug(rs.ctx, rs.q, rs.repo.Owner, sl)
		if errors.Is(err, store.ErrNotFound) {
			return nil, apierr.Unprocessable("Validation Failed: team %q not found", sl)
		} else if err != nil {
			return nil, err
		}
		ids = appendNew(ids, t.ID)
	}
	return ids, nil
}

func (rs resolver) apps(slugs []string) ([]int64, error) {
	ids := []int64{}
	for _, sl := range slugs {
		a, err := apps.BySlug(rs.ctx, rs.q, sl)
		if errors.Is(err, store.ErrNotFound) {
			return nil, apierr.Unprocessable("Validation Failed: app %q not found", sl)
		} else if err != nil {
			return nil, err
		}
		ids = appendNew(ids, a.ID)
	}
	return ids, nil
}

func appendNew(ids []int64, id int64) []int64 {
	if slices.Contains(ids, id) {
		return ids
	}
	return append(ids, id)
}

// listBody reads a body that is either a JSON array of names or an
// object holding it under key (the platform takes both).
func listBody(r *http.Request, key string) ([]string, error) {
	var raw json.RawMessage
	if err := httpapi.DecodeJSON(r, &raw); err != nil {
		return nil, err
	}
	var list []string
	if err := json.Unmarshal(raw, &list); err == nil {
		return list, nil
	}
	var obj map[string][]string
	if err := json.Unmarshal(raw, &obj); err != nil {
		return nil, invalidRequest(fmt.Sprintf("%s is not an array of strings.", raw))
	}
	list, ok := obj[key]
	if !ok {
		return nil, invalidRequest(fmt.Sprintf("%q wasn't supplied.", key))
	}
	return list, nil
}
