package teams

import (
	"context"
	"net/http"
	"strconv"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// legacyRoutes are the platform's routes of a team by its id
// (/teams/{team_id}/...): each is its /orgs/{org}/teams/{team_slug}
// route. The route's rule names no target (the path has no
// organization); byID resolves the team's organization and runs the
// access guard with the organization route's rule before the handler, so
// that both paths are checked alike.
func (h *Handler) legacyRoutes(read auth.Rule, write func(string) auth.Rule, manage auth.Rule) []httpapi.Route {
	team := "/teams/{team_id}"
	route := func(method, path string, handle httpapi.HandlerFunc, rule auth.Rule) httpapi.Route {
		untargeted := rule
		untargeted.Target = auth.TargetNone
		return httpapi.Route{Method: method, Pattern: team + path, Handle: h.byID(rule, handle), Auth: untargeted}
	}
	return []httpapi.Route{
		route("GET", "", h.get, read),
		route("PATCH", "", h.update, manage),
		route("DELETE", "", h.delete, manage),
		route("GET", "/members", h.members, read),
		route("GET", "/members/{username}", h.getMember, read),
		route("PUT", "/members/{username}", h.addMember, manage),
		route("DELETE", "/members/{username}", h.removeMember, manage),
		route("GET", "/memberships/{username}", h.getMembership, read),
		route("PUT", "/memberships/{username}", h.setMembership,
			write("Organization owners and the team's maintainers; only owners add users outside the organization (who are invited).")),
		route("DELETE", "/memberships/{username}", h.removeMembership, manage),
		route("GET", "/repos", h.repos, read),
		route("GET", "/repos/{owner}/{repo}", h.checkRepo, read),
		route("PUT", "/repos/{owner}/{repo}", h.setRepo, write("Admin rights on the repository, and a team the caller can see.")),
		route("DELETE", "/repos/{owner}/{repo}", h.removeRepo,
			write("Organization owners and the team's maintainers, or admin rights on the repository.")),
		route("GET", "/teams", h.children, read),
	}
}

// byID wraps an organization team route's handler for its /teams/{team_id}
// path: it resolves the team's organization and slug into the path
// values the handler reads ({org}, {team_slug}) and checks the caller
// against rule on that organization. A team id that is not a positive
// number, or names no team, is a 404.
func (h *Handler) byID(rule auth.Rule, next httpapi.HandlerFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		ctx := r.Context()
		guard := &access.Guard{DB: h.Service.DB}
		id, err := strconv.ParseInt(r.PathValue("team_id"), 10, 64)
		if err != nil || id <= 0 {
			return apierr.NotFound()
		}
		org, slug, err := teamOrg(ctx, h.Service.DB, id)
		if err != nil {
			return err
		}
		r.SetPathValue("org", org.Login)
		r.SetPathValue("team_slug", slug)
		ctx, err = guard.Check(r, auth.PrincipalFrom(ctx), rule)
		if err != nil {
			return err
		}
		return next(w, r.WithContext(ctx))
	}
}

// teamOrg is the organization and slug of the team with the id, or
// store.ErrNotFound.
func teamOrg(ctx context.Context, q store.Q, id int64) (*accounts.Account, string, error) {
	var orgID int64
	var slug string
	if err := q.QueryRowContext(ctx, `SELECT org_id, slug FROM teams WHERE id = $1`, id).Scan(&orgID, &slug); err != nil {
		return nil, "", store.Normalize(err)
	}
	org, err := accounts.ByID(ctx, q, orgID)
	return org, slug, err
}

// children answers GET .../teams: the team's child teams (direct ones)
// the caller can see, by name.
func (h *Handler) children(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	t, err := h.team(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	all, err := listTeams(ctx, h.Service.DB, t.Org, `SELECT `+teamColumns+` FROM teams
		WHERE org_id = $1 AND parent_id = $2 ORDER BY lower(name), id`, t.Org.ID, t.ID)
	if err != nil {
		return err
	}
	var seen []*Team
	for _, c := range all {
		if ok, err := h.visible(ctx, c); err != nil {
			return err
		} else if ok {
			seen = append(seen, c)
		}
	}
	return h.writeTeams(w, r, page, seen)
}

// getMember answers GET /teams/{team_id}/members/{username}: 204 when the
// user is an active member of the team (or of a child team), else 404.
func (h *Handler) getMember(w http.ResponseWriter, r *http.Request) error {
	t, err := h.team(r)
	if err != nil {
		return err
	}
	user, err := h.pathUser(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	role, err := MemberRole(ctx, h.Service.DB, t.ID, user.ID)
	if err != nil {
		return err
	}
	if role == "" {
		inherited, err := inheritedMember(ctx, h.Service.DB, t.ID, user.ID)
		if err != nil {
			return err
		}
		if !inherited {
			return apierr.NotFound()
		}
	}
	httpapi.NoContent(w)
	return nil
}

// addMember answers PUT /teams/{team_id}/members/{username}: the user, a
// member of the organization, joins the team as a member (an existing
// maintainer keeps that role). An organization, or a user outside the
// organization, is the platform's 422.
func (h *Handler) addMember(w http.ResponseWriter, r *http.Request) error {
	t, err := h.managedTeam(r)
	if err != nil {
		return err
	}
	user, err := h.pathUser(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	if user.IsOrg() {
		return &apierr.Error{Status: http.StatusUnprocessableEntity, Message: "Cannot add an organization as a member.",
			Errors: []apierr.FieldError{{Resource: "TeamMember", Field: "user", Code: "org"}}}
	}
	orgRole, err := accounts.MemberRole(ctx, h.Service.DB, t.Org.ID, user.ID)
	if err != nil {
		return err
	}
	if orgRole == "" {
		return &apierr.Error{Status: http.StatusUnprocessableEntity,
			Message: "User isn't a member of this organization. Please invite them first.",
			Errors:  []apierr.FieldError{{Resource: "TeamMember", Field: "user", Code: "unaffiliated"}}}
	}
	role, err := MemberRole(ctx, h.Service.DB, t.ID, user.ID)
	if err != nil {
		return err
	}
	if role == "" {
		actor, err := h.caller(r)
		if err != nil {
			return err
		}
		if _, err := h.Service.SetMembership(ctx, t, user, actor, RoleMember); err != nil {
			return err
		}
	}
	httpapi.NoContent(w)
	return nil
}

// removeMember answers DELETE /teams/{team_id}/members/{username}: as
// removing the membership; a user who is not a member is a 404.
func (h *Handler) removeMember(w http.ResponseWriter, r *http.Request) error {
	return h.removeMembership(w, r)
}
