package rulesets

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/apps"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// Handler serves /orgs/{org}/rulesets and the rule suites.
type Handler struct {
	Service *Service
}

// Routes is the rulesets route table: organization owners only; classic
// and OAuth tokens need admin:org, fine-grained tokens the organization
// permission Administration write, for reading too (the platform's table).
// The rule suites (evaluations of pushes) are read by the same owners, and
// a repository's by its admins.
func (h *Handler) Routes() []httpapi.Route {
	rule := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"},
		Permissions: auth.Perm("organization_administration:write"), TokenTypes: auth.AllTokenTypes}
	// A repository's rule suites: its admins, Administration read.
	repoRule := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Permissions: auth.Perm("administration:read"),
		TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "GET", Pattern: "/orgs/{org}/rulesets", Handle: h.list, Auth: rule},
		{Method: "POST", Pattern: "/orgs/{org}/rulesets", Handle: h.create, Auth: rule},
		{Method: "GET", Pattern: "/orgs/{org}/rulesets/{ruleset_id}", Handle: h.get, Auth: rule},
		{Method: "PUT", Pattern: "/orgs/{org}/rulesets/{ruleset_id}", Handle: h.update, Auth: rule},
		{Method: "DELETE", Pattern: "/orgs/{org}/rulesets/{ruleset_id}", Handle: h.delete, Auth: rule},
		{Method: "GET", Pattern: "/orgs/{org}/rulesets/rule-suites", Handle: h.listOrgSuites, Auth: rule},
		{Method: "GET", Pattern: "/orgs/{org}/rulesets/rule-suites/{rule_suite_id}", Handle: h.getOrgSuite, Auth: rule},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/rulesets/rule-suites", Handle: h.listRepoSuites, Auth: repoRule},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/rulesets/rule-suites/{rule_suite_id}", Handle: h.getRepoSuite, Auth: repoRule},
	}
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	all, err := List(r.Context(), h.Service.DB, org.ID, false)
	if err != nil {
		return err
	}
	if targets := r.URL.Query().Get("targets"); targets != "" {
		want := strings.Split(targets, ",")
		all = slices.DeleteFunc(all, func(rs *Ruleset) bool { return !slices.Contains(want, rs.Target) })
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]rulesetJSON, 0, page.Limit())
	for _, rs := range httpapi.Slice(page, all) {
		out = append(out, toSummaryJSON(base, org, nil, rs))
	}
	httpapi.SetLinks(w, r, page, len(all))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	rs, err := h.ruleset(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toJSON(httpapi.BaseURL(r.Context()), accounts.OrgFrom(r.Context()), nil, rs))
	return nil
}

// create makes a ruleset: 201. The target defaults to branch.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	rs := &Ruleset{OrgID: org.ID, Target: TargetBranch, BypassActors: []BypassActor{}, Rules: []Rule{}}
	in.apply(rs)
	if in.Enforcement == nil {
		return apierr.Invalid("Ruleset", "enforcement", apierr.CodeMissingField)
	}
	if err := h.check(r.Context(), rs); err != nil {
		return err
	}
	err := h.Service.DB.Tx(r.Context(), func(tx *store.Tx) error {
		if err := insert(r.Context(), tx, rs); err != nil {
			return err
		}
		return audit(r.Context(), tx, rs, "repository_ruleset.create")
	})
	if err != nil {
		return nameTaken(err)
	}
	httpapi.WriteJSON(w, http.StatusCreated, toJSON(httpapi.BaseURL(r.Context()), org, nil, rs))
	return nil
}

// update replaces the fields the body gives: 200.
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	rs, err := h.ruleset(r)
	if err != nil {
		return err
	}
	var in Input
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	in.apply(rs)
	if err := h.check(r.Context(), rs); err != nil {
		return err
	}
	err = h.Service.DB.Tx(r.Context(), func(tx *store.Tx) error {
		if err := update(r.Context(), tx, rs); err != nil {
			return err
		}
		return audit(r.Context(), tx, rs, "repository_ruleset.update")
	})
	if err != nil {
		return nameTaken(err)
	}
	httpapi.WriteJSON(w, http.StatusOK, toJSON(httpapi.BaseURL(r.Context()), accounts.OrgFrom(r.Context()), nil, rs))
	return nil
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "ruleset_id")
	if err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	err = h.Service.DB.Tx(r.Context(), func(tx *store.Tx) error {
		rs, err := ByID(r.Context(), tx, org.ID, id)
		if err != nil {
			return err
		}
		if err := remove(r.Context(), tx, org.ID, id); err != nil {
			return err
		}
		return audit(r.Context(), tx, rs, "repository_ruleset.destroy")
	})
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// ruleset returns the ruleset {ruleset_id} of {org}; a 404 for none.
func (h *Handler) ruleset(r *http.Request) (*Ruleset, error) {
	id, err := httpapi.PathInt64(r, "ruleset_id")
	if err != nil {
		return nil, err
	}
	rs, err := ByID(r.Context(), h.Service.DB, accounts.OrgFrom(r.Context()).ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound()
	}
	return rs, err
}

// check validates the ruleset and that its Integration bypass actors
// name apps that exist and its Team bypass actors teams of the
// organization.
func (h *Handler) check(ctx context.Context, rs *Ruleset) error {
	if err := validate(rs); err != nil {
		return err
	}
	for _, a := range rs.BypassActors {
		if a.ActorType == "Team" {
			if ok, err := access.TeamInOrg(ctx, h.Service.DB, rs.OrgID, *a.ActorID); err != nil {
				return err
			} else if !ok {
				return apierr.Custom("Ruleset", "bypass_actors", "No team with id %d in the organization", *a.ActorID)
			}
			continue
		}
		if a.ActorType != "Integration" {
			continue
		}
		if _, err := apps.ByID(ctx, h.Service.DB, *a.ActorID); errors.Is(err, store.ErrNotFound) {
			return apierr.Custom("Ruleset", "bypass_actors", "No app with id %d", *a.ActorID)
		} else if err != nil {
			return err
		}
	}
	return nil
}

// audit records the change of the ruleset in its organization's audit log.
func audit(ctx context.Context, tx store.Q, rs *Ruleset, action string) error {
	return auditlog.Record(ctx, tx, auditlog.Entry{OrgID: rs.OrgID, Action: action,
		Data: map[string]any{"ruleset_id": rs.ID, "name": rs.Name, "enforcement": rs.Enforcement, "target": rs.Target}})
}

// nameTaken turns a second ruleset of the same name into the 422.
func nameTaken(err error) error {
	if errors.Is(err, store.ErrConflict) {
		return apierr.Custom("Ruleset", "name", "Name must be unique")
	}
	return err
}

// rulesetJSON is the platform's repository-ruleset.
type rulesetJSON struct {
	ID           int64          `json:"id"`
	Name         string         `json:"name"`
	Target       string         `json:"target"`
	SourceType   string         `json:"source_type"`
	Source       string         `json:"source"`
	Enforcement  string         `json:"enforcement"`
	BypassActors *[]BypassActor `json:"bypass_actors,omitempty"`
	NodeID       string         `json:"node_id"`
	Links        links          `json:"_links"`
	Conditions   *Conditions    `json:"conditions,omitempty"`
	Rules        *[]Rule        `json:"rules,omitempty"`
	CreatedAt    wire.Time      `json:"created_at"`
	UpdatedAt    wire.Time      `json:"updated_at"`
}

type links struct {
	Self href `json:"self"`
	HTML href `json:"html"`
}

type href struct {
	Href string `json:"href"`
}

// toSummaryJSON is a ruleset as lists show it: without its conditions,
// rules and bypass actors. owner is the organization (or the
// repository's owner); repo, the repository of a repository ruleset.
func toSummaryJSON(base string, owner *accounts.Account, repo *repos.Repository, rs *Ruleset) rulesetJSON {
	id := wire.Itoa(rs.ID)
	j := rulesetJSON{
		ID: rs.ID, Name: rs.Name, Target: rs.Target, SourceType: "Organization", Source: owner.Login,
		Enforcement: rs.Enforcement, NodeID: wire.NodeID("RRS", rs.ID),
		Links: links{
			Self: href{base + "/orgs/" + owner.Login + "/rulesets/" + id},
			HTML: href{accounts.WebBase(base) + "/organizations/" + owner.Login + "/settings/rules/" + id},
		},
		CreatedAt: wire.T(rs.CreatedAt), UpdatedAt: wire.T(rs.UpdatedAt),
	}
	if rs.RepoID != 0 && repo != nil {
		j.SourceType, j.Source = "Repository", repo.FullName()
		j.Links = links{Self: href{base + "/repos/" + repo.FullName() + "/rulesets/" + id},
			HTML: href{accounts.WebBase(base) + "/" + repo.FullName() + "/rules/" + id}}
	}
	return j
}

// toJSON is the whole ruleset.
func toJSON(base string, owner *accounts.Account, repo *repos.Repository, rs *Ruleset) rulesetJSON {
	j := toSummaryJSON(base, owner, repo, rs)
	actors, rules := nonNil(rs.BypassActors), nonNil(rs.Rules)
	cond := rs.Conditions
	j.BypassActors, j.Conditions, j.Rules = &actors, &cond, &rules
	return j
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
