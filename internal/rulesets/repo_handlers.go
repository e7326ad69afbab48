package rulesets

import (
	"errors"
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// RepoRoutes is the repository rulesets' route table: those who read the
// repository read its rulesets (fine-grained: Metadata read), its admins
// change them (Administration write).
func (h *Handler) RepoRoutes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}
	write := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin,
		Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/rulesets", Handle: h.listRepo, Auth: read},
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/rulesets", Handle: h.createRepo, Auth: write},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/rulesets/{ruleset_id}", Handle: h.getRepo, Auth: read},
		{Method: "PUT", Pattern: "/repos/{owner}/{repo}/rulesets/{ruleset_id}", Handle: h.updateRepo, Auth: write},
		{Method: "DELETE", Pattern: "/repos/{owner}/{repo}/rulesets/{ruleset_id}", Handle: h.deleteRepo, Auth: write},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/rules/branches/{branch...}", Handle: h.branchRules, Auth: read},
	}
}

// parents reads includes_parents (default true).
func parents(r *http.Request) (bool, error) { return httpapi.QueryBool(r, "includes_parents", true) }

// applying are the rulesets that apply to the route's repository: its
// own and, with parents, its organization's that select it.
func (h *Handler) applying(r *http.Request, withParents, enforcing bool) ([]*Ruleset, error) {
	repo := repos.From(r.Context())
	all, err := ForRepo(r.Context(), h.Service.DB, repo.Owner.ID, repo.ID, withParents && repo.Owner.IsOrg(), enforcing)
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(rs *Ruleset) bool { return !rs.AppliesToRepo(repo) }), nil
}

// listRepo answers GET /repos/{owner}/{repo}/rulesets: includes_parents,
// targets, paged.
func (h *Handler) listRepo(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	withParents, err := parents(r)
	if err != nil {
		return err
	}
	all, err := h.applying(r, withParents, false)
	if err != nil {
		return err
	}
	if targets := r.URL.Query().Get("targets"); targets != "" {
		want := strings.Split(targets, ",")
		all = slices.DeleteFunc(all, func(rs *Ruleset) bool { return !slices.Contains(want, rs.Target) })
	}
	repo, base := repos.From(r.Context()), httpapi.BaseURL(r.Context())
	out := make([]rulesetJSON, 0, page.Limit())
	for _, rs := range httpapi.Slice(page, all) {
		out = append(out, toSummaryJSON(base, repo.Owner, repo, rs))
	}
	httpapi.SetLinks(w, r, page, len(all))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// repoRuleset returns the ruleset {ruleset_id} of the route's repository
// (or, with parents, of its organization when it applies); a 404 for none.
func (h *Handler) repoRuleset(r *http.Request, withParents bool) (*Ruleset, error) {
	id, err := httpapi.PathInt64(r, "ruleset_id")
	if err != nil {
		return nil, err
	}
	all, err := h.applying(r, withParents, false)
	if err != nil {
		return nil, err
	}
	for _, rs := range all {
		if rs.ID == id {
			return rs, nil
		}
	}
	return nil, apierr.NotFound()
}

func (h *Handler) getRepo(w http.ResponseWriter, r *http.Request) error {
	withParents, err := parents(r)
	if err != nil {
		return err
	}
	rs, err := h.repoRuleset(r, withParents)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	httpapi.WriteJSON(w, http.StatusOK, toJSON(httpapi.BaseURL(r.Context()), repo.Owner, repo, rs))
	return nil
}

// createRepo makes a repository ruleset: 201. The target defaults to
// branch; conditions name references only.
func (h *Handler) createRepo(w http.ResponseWriter, r *http.Request) error {
	var in Input
	if err := httpapi.DecodeJSON(r, &in); err != nil {
		return err
	}
	repo := repos.From(r.Context())
	rs := &Ruleset{OrgID: repo.Owner.ID, RepoID: repo.ID, Target: TargetBranch, BypassActors: []BypassActor{}, Rules: []Rule{}}
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
		return auditRepo(r, tx, repo, rs, "repository_ruleset.create")
	})
	if err != nil {
		return nameTaken(err)
	}
	httpapi.WriteJSON(w, http.StatusCreated, toJSON(httpapi.BaseURL(r.Context()), repo.Owner, repo, rs))
	return nil
}

// updateRepo replaces the fields the body gives of the repository's own
// ruleset: 200.
func (h *Handler) updateRepo(w http.ResponseWriter, r *http.Request) error {
	rs, err := h.repoRuleset(r, false)
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
	repo := repos.From(r.Context())
	err = h.Service.DB.Tx(r.Context(), func(tx *store.Tx) error {
		if err := update(r.Context(), tx, rs); err != nil {
			return err
		}
		return auditRepo(r, tx, repo, rs, "repository_ruleset.update")
	})
	if err != nil {
		return nameTaken(err)
	}
	httpapi.WriteJSON(w, http.StatusOK, toJSON(httpapi.BaseURL(r.Context()), repo.Owner, repo, rs))
	return nil
}

func (h *Handler) deleteRepo(w http.ResponseWriter, r *http.Request) error {
	rs, err := h.repoRuleset(r, false)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	err = h.Service.DB.Tx(r.Context(), func(tx *store.Tx) error {
		if err := remove(r.Context(), tx, rs.OrgID, rs.ID); err != nil {
			return err
		}
		return auditRepo(r, tx, repo, rs, "repository_ruleset.destroy")
	})
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	} else if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// auditRepo records the change in the audit log of the repository's
// organization (a user's repository has none).
func auditRepo(r *http.Request, tx store.Q, repo *repos.Repository, rs *Ruleset, action string) error {
	if !repo.Owner.IsOrg() {
		return nil
	}
	return audit(r.Context(), tx, rs, action)
}

// branchRuleJSON is a rule with the ruleset it comes from
// (repository-rule-detailed).
type branchRuleJSON struct {
	Rule
	SourceType string `json:"ruleset_source_type"`
	Source     string `json:"ruleset_source"`
	RulesetID  int64  `json:"ruleset_id"`
}

// branchRules answers GET /repos/{owner}/{repo}/rules/branches/{branch}:
// the rules of the active rulesets that apply to the branch (whether or
// not it exists), paged.
func (h *Handler) branchRules(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	all, err := h.applying(r, true, true)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	u := githttp.RefUpdate{Ref: "refs/heads/" + r.PathValue("branch")}
	out := []branchRuleJSON{}
	for _, rs := range all {
		if rs.Enforcement != EnforcementActive || !rs.AppliesToRef(repo, u) {
			continue
		}
		sourceType, source := "Organization", repo.Owner.Login
		if rs.RepoID != 0 {
			sourceType, source = "Repository", repo.FullName()
		}
		for _, rule := range rs.Rules {
			out = append(out, branchRuleJSON{Rule: rule, SourceType: sourceType, Source: source, RulesetID: rs.ID})
		}
	}
	shown := httpapi.Slice(page, out)
	if shown == nil {
		shown = []branchRuleJSON{}
	}
	httpapi.SetLinks(w, r, page, len(out))
	httpapi.WriteJSON(w, http.StatusOK, shown)
	return nil
}
