package repos

import (
	"cmp"
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// RoleFunc computes a principal's role on a repository after the limits
// of its credentials (access.RepoRole); RoleNone hides the repository.
type RoleFunc func(ctx context.Context, q store.Q, p *auth.Principal, r *Repository) (auth.Role, error)

// listQuery is what the list endpoints share: sorting, direction, time
// window and page.
type listQuery struct {
	sort   string // created | updated | pushed | full_name
	desc   bool
	since  time.Time // updated at or after
	before time.Time // updated before
	page   httpapi.Page
	typ    string
}

// parseList reads sort, direction and the page; defaultSort differs per
// endpoint. Values outside the documented sets are a 422.
func parseList(r *http.Request, defaultSort string, types []string, defaultType string) (listQuery, error) {
	q := r.URL.Query()
	var fields apierr.Fields
	lq := listQuery{sort: defaultSort, typ: defaultType}
	if s := q.Get("sort"); s != "" {
		if !slices.Contains([]string{"created", "updated", "pushed", "full_name"}, s) {
			fields.Add("", "sort", apierr.CodeInvalid)
		}
		lq.sort = s
	}
	lq.desc = lq.sort != "full_name"
	switch q.Get("direction") {
	case "":
	case "asc":
		lq.desc = false
	case "desc":
		lq.desc = true
	default:
		fields.Add("", "direction", apierr.CodeInvalid)
	}
	if s := q.Get("type"); s != "" {
		if !slices.Contains(types, s) {
			fields.Add("", "type", apierr.CodeInvalid)
		}
		lq.typ = s
	}
	for _, name := range []string{"since", "before"} {
		s := q.Get(name)
		if s == "" {
			continue
		}
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			fields.Add("", name, apierr.CodeInvalid)
			continue
		}
		if name == "since" {
			lq.since = t
		} else {
			lq.before = t
		}
	}
	page, err := httpapi.ParsePage(r)
	var pageErr *apierr.Error
	if errors.As(err, &pageErr) {
		fields = append(fields, pageErr.Errors...)
	} else if err != nil {
		return lq, err
	}
	lq.page = page
	return lq, fields.Err()
}

// listForAuthenticatedUser serves GET /user/repos: the repositories the
// caller owns and those of its organizations, as far as its credentials
// reach. `type` may not be combined with `visibility` or `affiliation`.
func (h *Handler) listForAuthenticatedUser(w http.ResponseWriter, r *http.Request) error {
	q := r.URL.Query()
	lq, err := parseList(r, "full_name", []string{"all", "owner", "public", "private", "member"}, "")
	if err != nil {
		return err
	}
	if lq.typ != "" && (q.Has("visibility") || q.Has("affiliation")) {
		return apierr.Unprocessable("If you specify visibility or affiliation, you cannot specify type.")
	}
	visibility, affiliation, err := userListFilters(q.Get("visibility"), q.Get("affiliation"), lq.typ)
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(r.Context())
	candidates, err := Affiliated(r.Context(), h.Service.DB, p.Account.ID)
	if err != nil {
		return err
	}
	orgs, err := accounts.OrgsOf(r.Context(), h.Service.DB, p.Account.ID)
	if err != nil {
		return err
	}
	keep := func(repo *Repository) bool {
		var aff string
		switch {
		case repo.Owner.ID == p.Account.ID:
			aff = "owner"
		case slices.Contains(orgs, repo.Owner.ID):
			aff = "organization_member"
		default:
			aff = "collaborator"
		}
		return slices.Contains(affiliation, aff) && (visibility == "all" || visibility == repo.Visibility())
	}
	return h.writeList(w, r, candidates, lq, keep)
}

// userListFilters turns the query of GET /user/repos into a visibility
// (all, public, private) and the affiliations to include.
func userListFilters(visibility, affiliation, typ string) (string, []string, error) {
	var fields apierr.Fields
	switch visibility {
	case "":
		visibility = "all"
	case "all", "public", "private":
	default:
		fields.Add("", "visibility", apierr.CodeInvalid)
	}
	affs := []string{"owner", "collaborator", "organization_member"}
	if affiliation != "" {
		affs = nil
		for _, a := range strings.Split(affiliation, ",") {
			a = strings.TrimSpace(a)
			if !slices.Contains([]string{"owner", "collaborator", "organization_member"}, a) {
				fields.Add("", "affiliation", apierr.CodeInvalid)
				break
			}
			affs = append(affs, a)
		}
	}
	switch typ {
	case "owner":
		affs = []string{"owner"}
	case "member":
		affs = []string{"collaborator", "organization_member"}
	case "public", "private":
		visibility = typ
	}
	return visibility, affs, fields.Err()
}

// listForUser serves GET /users/{username}/repos: the public
// repositories of the account. `type=member` adds the public repositories
// of its organizations only for the account itself, since memberships are
// not public.
func (h *Handler) listForUser(w http.ResponseWriter, r *http.Request) error {
	lq, err := parseList(r, "full_name", []string{"all", "owner", "member"}, "owner")
	if err != nil {
		return err
	}
	target := accounts.UserFrom(r.Context())
	p := auth.PrincipalFrom(r.Context())
	includeOwned := lq.typ != "member"
	includeOrgs := lq.typ != "owner" && p.UserID() == target.ID
	candidates, err := list(r.Context(), h.Service.DB, `SELECT `+repoColumns+repoFrom+`
		WHERE NOT r.private AND ((r.owner_id = $1 AND $2) OR
		      ($3 AND r.owner_id IN (SELECT org_id FROM org_members WHERE user_id = $1)))`,
		target.ID, includeOwned, includeOrgs)
	if err != nil {
		return err
	}
	return h.writeList(w, r, candidates, lq, func(*Repository) bool { return true })
}

// listForOrg serves GET /orgs/{org}/repos: the organization's
// repositories the caller can see.
func (h *Handler) listForOrg(w http.ResponseWriter, r *http.Request) error {
	lq, err := parseList(r, "created", []string{"all", "public", "private", "forks", "sources", "member"}, "all")
	if err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	candidates, err := ByOwner(r.Context(), h.Service.DB, org.ID)
	if err != nil {
		return err
	}
	member := false
	if p := auth.PrincipalFrom(r.Context()); !p.Anonymous() {
		role, err := accounts.MemberRole(r.Context(), h.Service.DB, org.ID, p.Account.ID)
		if err != nil {
			return err
		}
		member = role != ""
	}
	keep := func(repo *Repository) bool {
		switch lq.typ {
		case "public", "private":
			return repo.Visibility() == lq.typ
		case "forks":
			return repo.ForkOfID != 0
		case "sources":
			return repo.ForkOfID == 0
		case "member":
			return member
		}
		return true
	}
	return h.writeList(w, r, candidates, lq, keep)
}

// writeList keeps the candidates the caller may see and the filter keeps,
// sorts them, and writes the requested page with its Link header.
func (h *Handler) writeList(w http.ResponseWriter, r *http.Request, candidates []*Repository, lq listQuery, keep func(*Repository) bool) error {
	return h.writeListAs(w, r, candidates, lq, keep, nil)
}

// writeListAs is writeList rendering each repository through as (nil: the
// repository object itself).
func (h *Handler) writeListAs(w http.ResponseWriter, r *http.Request, candidates []*Repository, lq listQuery,
	keep func(*Repository) bool, as func(*Repository, JSON) any) error {
	ctx := r.Context()
	p := auth.PrincipalFrom(ctx)
	type visible struct {
		repo *Repository
		role auth.Role
	}
	var shown []visible
	for _, repo := range candidates {
		if !lq.since.IsZero() && repo.UpdatedAt.Before(lq.since) || !lq.before.IsZero() && !repo.UpdatedAt.Before(lq.before) {
			continue
		}
		role, err := h.roleOf(ctx, p, repo)
		if err != nil {
			return err
		}
		if role != auth.RoleNone && keep(repo) {
			shown = append(shown, visible{repo, role})
		}
	}
	slices.SortStableFunc(shown, func(a, b visible) int {
		c := compareRepos(a.repo, b.repo, lq.sort)
		if lq.desc {
			return -c
		}
		return c
	})
	page := httpapi.Slice(lq.page, shown)
	out := make([]any, 0, len(page))
	urls := URLsOf(ctx)
	for _, v := range page {
		st, err := h.Service.Stats(ctx, v.repo.ID)
		if err != nil {
			return err
		}
		role := v.role
		if p.Anonymous() {
			role = auth.RoleNone
		}
		j := ToJSON(urls, v.repo, st, role)
		if as != nil {
			out = append(out, as(v.repo, j))
		} else {
			out = append(out, &j) // *JSON renders itself (AppendJSON)
		}
	}
	httpapi.SetLinks(w, r, lq.page, len(shown))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) roleOf(ctx context.Context, p *auth.Principal, repo *Repository) (auth.Role, error) {
	if h.RoleOf == nil { // without a guard, only public repositories show
		if repo.Private {
			return auth.RoleNone, nil
		}
		return auth.RoleRead, nil
	}
	return h.RoleOf(ctx, h.Service.DB, p, repo)
}

// compareRepos orders by the sort key, ties broken by id; the empty key
// keeps the candidates' order.
func compareRepos(a, b *Repository, sort string) int {
	var c int
	switch sort {
	case "":
		return 0 // the candidates' own order (the stable sort keeps it)
	case "full_name":
		c = strings.Compare(strings.ToLower(a.FullName()), strings.ToLower(b.FullName()))
	case "updated":
		c = a.UpdatedAt.Compare(b.UpdatedAt)
	case "pushed":
		c = pushedOrCreated(a).Compare(pushedOrCreated(b))
	default:
		c = a.CreatedAt.Compare(b.CreatedAt)
	}
	if c == 0 {
		c = cmp.Compare(a.ID, b.ID)
	}
	return c
}

func pushedOrCreated(r *Repository) time.Time {
	if r.PushedAt != nil {
		return *r.PushedAt
	}
	return r.CreatedAt
}
