package prereceive

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// enforcementRequest is the body of an organization's or a repository's
// PATCH (allow_downstream_configuration: organizations only).
type enforcementRequest struct {
	Enforcement     *string `json:"enforcement"`
	AllowDownstream *bool   `json:"allow_downstream_configuration"`
}

func (b *enforcementRequest) validate() error {
	if b.Enforcement != nil && !validEnforcement(*b.Enforcement) {
		return apierr.Invalid(hookResource, "enforcement", apierr.CodeInvalid)
	}
	return nil
}

// notConfigurable is the 422 of an override the level above does not
// allow.
func notConfigurable(where string) error {
	return apierr.Validation(apierr.FieldError{Resource: hookResource, Field: "enforcement", Code: apierr.CodeCustom,
		Message: "This hook's enforcement cannot be configured for " + where})
}

func toOrgHookJSON(base string, hk *Hook, st Setting, org *accounts.Account) orgHookJSON {
	return orgHookJSON{ID: hk.ID, Name: hk.Name, Enforcement: st.Enforcement, AllowDownstreamConfiguration: st.AllowDownstream,
		ConfigurationURL: configurationURL(base, hk, st, org, nil)}
}

func toRepoHookJSON(base string, hk *Hook, st Setting, repo *repos.Repository) repoHookJSON {
	return repoHookJSON{ID: hk.ID, Name: hk.Name, Enforcement: st.Enforcement,
		ConfigurationURL: configurationURL(base, hk, st, repo.Owner, repo)}
}

// listOrgHooks lists the hooks in force at the organization and the
// disabled ones it may configure.
func (h *Handler) listOrgHooks(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	page, order, err := parseListing(r)
	if err != nil {
		return err
	}
	org := accounts.OrgFrom(ctx)
	hooks, err := Hooks(ctx, h.Service.DB)
	if err != nil {
		return err
	}
	overrides, err := orgOverrides(ctx, h.Service.DB, org.ID)
	if err != nil {
		return err
	}
	var shown []*Hook
	for _, hk := range hooks {
		if hk.AllowDownstream || orgSetting(hk, overrides).Enforcement != Disabled {
			shown = append(shown, hk)
		}
	}
	sortList(order, shown, hookKey)
	base := httpapi.BaseURL(ctx)
	out := []orgHookJSON{}
	for _, hk := range httpapi.Slice(page, shown) {
		out = append(out, toOrgHookJSON(base, hk, orgSetting(hk, overrides), org))
	}
	httpapi.SetLinks(w, r, page, len(shown))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// writeOrgHook answers the hook as the organization sees it.
func (h *Handler) writeOrgHook(w http.ResponseWriter, r *http.Request, hk *Hook) error {
	ctx := r.Context()
	org := accounts.OrgFrom(ctx)
	overrides, err := orgOverrides(ctx, h.Service.DB, org.ID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toOrgHookJSON(httpapi.BaseURL(ctx), hk, orgSetting(hk, overrides), org))
	return nil
}

func (h *Handler) getOrgHook(w http.ResponseWriter, r *http.Request) error {
	hk, err := h.pathHook(r)
	if err != nil {
		return err
	}
	return h.writeOrgHook(w, r, hk)
}

// updateOrgHook sets the organization's override: a 422 when the hook
// does not allow organizations to configure it. Fields left out keep
// the setting in force.
func (h *Handler) updateOrgHook(w http.ResponseWriter, r *http.Request) error {
	hk, err := h.pathHook(r)
	if err != nil {
		return err
	}
	var body enforcementRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(); err != nil {
		return err
	}
	if !hk.AllowDownstream {
		return notConfigurable("organizations")
	}
	ctx := r.Context()
	org := accounts.OrgFrom(ctx)
	overrides, err := orgOverrides(ctx, h.Service.DB, org.ID)
	if err != nil {
		return err
	}
	st := orgSetting(hk, overrides)
	if body.Enforcement != nil {
		st.Enforcement = *body.Enforcement
	}
	if body.AllowDownstream != nil {
		st.AllowDownstream = *body.AllowDownstream
	}
	_, err = h.Service.DB.ExecContext(ctx, `INSERT INTO pre_receive_org_hooks (hook_id, org_id, enforcement, allow_downstream)
		VALUES ($1, $2, $3, $4) ON CONFLICT (hook_id, org_id) DO UPDATE SET enforcement = excluded.enforcement,
		allow_downstream = excluded.allow_downstream`, hk.ID, org.ID, st.Enforcement, st.AllowDownstream)
	if err != nil {
		return err
	}
	return h.writeOrgHook(w, r, hk)
}

// removeOrgHook removes the organization's override: the hook's own
// setting is in force again.
func (h *Handler) removeOrgHook(w http.ResponseWriter, r *http.Request) error {
	hk, err := h.pathHook(r)
	if err != nil {
		return err
	}
	_, err = h.Service.DB.ExecContext(r.Context(), `DELETE FROM pre_receive_org_hooks WHERE hook_id = $1 AND org_id = $2`,
		hk.ID, accounts.OrgFrom(r.Context()).ID)
	if err != nil {
		return err
	}
	return h.writeOrgHook(w, r, hk)
}

// listRepoHooks lists the hooks in force at the repository and the
// disabled ones it may configure.
func (h *Handler) listRepoHooks(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	page, order, err := parseListing(r)
	if err != nil {
		return err
	}
	repo := repos.From(ctx)
	hooks, err := Hooks(ctx, h.Service.DB)
	if err != nil {
		return err
	}
	sc, err := loadRepoScope(ctx, h.Service.DB, repo)
	if err != nil {
		return err
	}
	var shown []*Hook
	for _, hk := range hooks {
		if orgSetting(hk, sc.orgs).AllowDownstream || repoSetting(hk, sc.orgs, sc.own).Enforcement != Disabled {
			shown = append(shown, hk)
		}
	}
	sortList(order, shown, hookKey)
	base := httpapi.BaseURL(ctx)
	out := []repoHookJSON{}
	for _, hk := range httpapi.Slice(page, shown) {
		out = append(out, toRepoHookJSON(base, hk, repoSetting(hk, sc.orgs, sc.own), repo))
	}
	httpapi.SetLinks(w, r, page, len(shown))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// writeRepoHook answers the hook as the repository sees it.
func (h *Handler) writeRepoHook(w http.ResponseWriter, r *http.Request, hk *Hook) error {
	ctx := r.Context()
	repo := repos.From(ctx)
	sc, err := loadRepoScope(ctx, h.Service.DB, repo)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toRepoHookJSON(httpapi.BaseURL(ctx), hk, repoSetting(hk, sc.orgs, sc.own), repo))
	return nil
}

func (h *Handler) getRepoHook(w http.ResponseWriter, r *http.Request) error {
	hk, err := h.pathHook(r)
	if err != nil {
		return err
	}
	return h.writeRepoHook(w, r, hk)
}

// updateRepoHook sets the repository's override: a 422 when the level
// above (the organization's override, else the hook) does not allow it.
func (h *Handler) updateRepoHook(w http.ResponseWriter, r *http.Request) error {
	hk, err := h.pathHook(r)
	if err != nil {
		return err
	}
	var body enforcementRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(); err != nil {
		return err
	}
	ctx := r.Context()
	repo := repos.From(ctx)
	sc, err := loadRepoScope(ctx, h.Service.DB, repo)
	if err != nil {
		return err
	}
	if !orgSetting(hk, sc.orgs).AllowDownstream {
		return notConfigurable("repositories")
	}
	st := repoSetting(hk, sc.orgs, sc.own)
	if body.Enforcement != nil {
		st.Enforcement = *body.Enforcement
	}
	_, err = h.Service.DB.ExecContext(ctx, `INSERT INTO pre_receive_repo_hooks (hook_id, repository_id, enforcement)
		VALUES ($1, $2, $3) ON CONFLICT (hook_id, repository_id) DO UPDATE SET enforcement = excluded.enforcement`,
		hk.ID, repo.ID, st.Enforcement)
	if err != nil {
		return err
	}
	return h.writeRepoHook(w, r, hk)
}

// removeRepoHook removes the repository's override.
func (h *Handler) removeRepoHook(w http.ResponseWriter, r *http.Request) error {
	hk, err := h.pathHook(r)
	if err != nil {
		return err
	}
	_, err = h.Service.DB.ExecContext(r.Context(), `DELETE FROM pre_receive_repo_hooks WHERE hook_id = $1 AND repository_id = $2`,
		hk.ID, repos.From(r.Context()).ID)
	if err != nil {
		return err
	}
	return h.writeRepoHook(w, r, hk)
}
