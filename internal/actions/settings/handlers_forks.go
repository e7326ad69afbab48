package settings

import (
	"net/http"
	"regexp"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// moreRoutes are the settings of fork pull requests' workflows in
// private repositories and their approval, the
// repositories that may use an organization's self-hosted runners, and
// the OIDC subject customization (placesettings.go keeps them).
func (h *Handler) moreRoutes() []httpapi.Route {
	const repo = "/repos/{owner}/{repo}/actions"
	const org = "/orgs/{org}/actions"
	const ent = "/enterprises/{enterprise}/actions"
	read, write := repoRule(auth.RoleAdmin, "administration:read"), repoRule(auth.RoleAdmin, "administration:write")
	orgRead, orgWrite := orgRule("organization_administration:read"), orgRule("organization_administration:write")
	entRule := auth.Rule{Target: auth.TargetEnterprise, Role: auth.RoleAdmin, Scopes: []string{"admin:enterprise"}}
	out := []httpapi.Route{
		{Method: "GET", Pattern: org + "/permissions/self-hosted-runners", Handle: h.getSelfHosted, Auth: orgRead},
		{Method: "PUT", Pattern: org + "/permissions/self-hosted-runners", Handle: h.setSelfHosted, Auth: orgWrite},
		{Method: "GET", Pattern: org + "/permissions/self-hosted-runners/repositories", Handle: h.listOrgRepos(selfHostedRepos), Auth: orgRead},
		{Method: "PUT", Pattern: org + "/permissions/self-hosted-runners/repositories", Handle: h.setOrgRepos(selfHostedRepos, "SelfHostedRunnersSettings"), Auth: orgWrite},
		{Method: "PUT", Pattern: org + "/permissions/self-hosted-runners/repositories/{repository_id}", Handle: h.changeOrgRepo(selfHostedRepos, true), Auth: orgWrite},
		{Method: "DELETE", Pattern: org + "/permissions/self-hosted-runners/repositories/{repository_id}", Handle: h.changeOrgRepo(selfHostedRepos, false), Auth: orgWrite},
		{Method: "GET", Pattern: repo + "/oidc/customization/sub", Handle: h.getOIDCSub(repoPlaceOf), Auth: read},
		{Method: "PUT", Pattern: repo + "/oidc/customization/sub", Handle: h.setOIDCSub(repoPlaceOf), Auth: write},
		{Method: "GET", Pattern: org + "/oidc/customization/sub", Handle: h.getOIDCSub(orgPlaceOf), Auth: orgRead},
		{Method: "PUT", Pattern: org + "/oidc/customization/sub", Handle: h.setOIDCSub(orgPlaceOf), Auth: orgWrite},
	}
	for _, p := range []struct {
		path        string
		place       placeFunc
		read, write auth.Rule
	}{{repo, repoPlaceOf, read, write}, {org, orgPlaceOf, orgRead, orgWrite}, {ent, enterprisePlaceOf, entRule, entRule}} {
		out = append(out,
			httpapi.Route{Method: "GET", Pattern: p.path + "/permissions/fork-pr-workflows-private-repos", Handle: h.getForkPRPrivate(p.place), Auth: p.read},
			httpapi.Route{Method: "PUT", Pattern: p.path + "/permissions/fork-pr-workflows-private-repos", Handle: h.setForkPRPrivate(p.place), Auth: p.write},
			httpapi.Route{Method: "GET", Pattern: p.path + "/permissions/fork-pr-contributor-approval", Handle: h.getApproval(p.place), Auth: p.read},
			httpapi.Route{Method: "PUT", Pattern: p.path + "/permissions/fork-pr-contributor-approval", Handle: h.setApproval(p.place), Auth: p.write},
		)
	}
	return out
}

// publicRepo refuses the private-repository settings of a public
// repository with a 403, as the platform does.
func publicRepo(r *http.Request, p Place) error {
	if p.Scope == ScopeRepo && !repos.From(r.Context()).Private {
		return apierr.New(http.StatusForbidden, "%s", "This setting applies only to private repositories")
	}
	return nil
}

// getForkPRPrivate answers GET .../permissions/fork-pr-workflows-private-repos:
// the place's settings, as bounded by its organization and enterprise.
func (h *Handler) getForkPRPrivate(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _, _ := place(r)
		if err := publicRepo(r, p); err != nil {
			return err
		}
		v, err := h.Service.ForkPRPrivate(r.Context(), p)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, v)
		return nil
	}
}

// setForkPRPrivate answers PUT .../permissions/fork-pr-workflows-private-repos:
// run_workflows_from_fork_pull_requests required, the others false when
// left out; 422 for settings looser than the organization's (or
// enterprise's).
func (h *Handler) setForkPRPrivate(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Run             *bool `json:"run_workflows_from_fork_pull_requests"`
			WriteTokens     *bool `json:"send_write_tokens_to_workflows"`
			Secrets         *bool `json:"send_secrets_and_variables"`
			RequireApproval *bool `json:"require_approval_for_fork_pr_workflows"`
		}
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		if body.Run == nil {
			return apierr.Invalid("ForkPrWorkflowsPrivateRepos", "run_workflows_from_fork_pull_requests", apierr.CodeMissingField)
		}
		p, _, _ := place(r)
		if err := publicRepo(r, p); err != nil {
			return err
		}
		v := ForkPRPrivate{Run: *body.Run}
		setIf(&v.WriteTokens, body.WriteTokens)
		setIf(&v.Secrets, body.Secrets)
		setIf(&v.RequireApproval, body.RequireApproval)
		bound, err := h.Service.forkPRBound(r.Context(), p)
		if err != nil {
			return err
		}
		if v.looser(bound) {
			return apierr.Validation(apierr.FieldError{Resource: "ForkPrWorkflowsPrivateRepos", Code: apierr.CodeInvalid,
				Field:   "run_workflows_from_fork_pull_requests",
				Message: "The setting cannot allow more than the policy of the organization or enterprise"})
		}
		if err := h.Service.setPlaceSetting(r.Context(), p, settingForkPRPrivate, v); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

// getApproval answers GET .../permissions/fork-pr-contributor-approval.
func (h *Handler) getApproval(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _, _ := place(r)
		v, err := h.Service.ApprovalPolicy(r.Context(), p)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, map[string]string{"approval_policy": v})
		return nil
	}
}

// setApproval answers PUT .../permissions/fork-pr-contributor-approval:
// approval_policy one of the three; 422 for one looser than the
// organization's or enterprise's.
func (h *Handler) setApproval(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			Policy *string `json:"approval_policy"`
		}
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		if body.Policy == nil {
			return apierr.Invalid("ForkPrContributorApproval", "approval_policy", apierr.CodeMissingField)
		}
		rank, ok := approvalRank[*body.Policy]
		if !ok {
			return apierr.Validation(apierr.FieldError{Resource: "ForkPrContributorApproval", Field: "approval_policy",
				Code: apierr.CodeInvalid, Message: "approval_policy must be one of first_time_contributors_new_to_github, " +
					"first_time_contributors or all_external_contributors"})
		}
		p, _, _ := place(r)
		parents, err := parentsOf(r.Context(), h.Service.DB, p)
		if err != nil {
			return err
		}
		if len(parents) > 0 {
			bound, err := h.Service.ApprovalPolicy(r.Context(), parents[0])
			if err != nil {
				return err
			}
			if rank < approvalRank[bound] {
				return apierr.Validation(apierr.FieldError{Resource: "ForkPrContributorApproval", Field: "approval_policy",
					Code: apierr.CodeInvalid, Message: "approval_policy cannot be looser than the organization's " + bound})
			}
		}
		if err := h.Service.setPlaceSetting(r.Context(), p, settingApproval, map[string]string{"approval_policy": *body.Policy}); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

// claimKeyPattern is what a claim key may hold.
var claimKeyPattern = regexp.MustCompile(`^[A-Za-z0-9_]+$`)

// getOIDCSub answers GET .../oidc/customization/sub: an organization's
// include_claim_keys, a repository's use_default and its keys.
func (h *Handler) getOIDCSub(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		p, _, _ := place(r)
		v, err := h.Service.OIDCSub(r.Context(), p)
		if err != nil {
			return err
		}
		if p.Scope == ScopeOrg {
			httpapi.WriteJSON(w, http.StatusOK, map[string]any{"include_claim_keys": v.Keys})
			return nil
		}
		out := map[string]any{"use_default": v.UseDefault}
		if !v.UseDefault {
			out["include_claim_keys"] = v.Keys
		}
		httpapi.WriteJSON(w, http.StatusOK, out)
		return nil
	}
}

// setOIDCSub answers PUT .../oidc/customization/sub: 201 with {}. An
// organization sends include_claim_keys; a repository use_default (then
// include_claim_keys, needed when false, is ignored).
func (h *Handler) setOIDCSub(place placeFunc) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		var body struct {
			UseDefault *bool     `json:"use_default"`
			Keys       *[]string `json:"include_claim_keys"`
		}
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
		p, _, _ := place(r)
		v := OIDCSub{Keys: DefaultSubKeys}
		var f apierr.Fields
		if p.Scope == ScopeRepo {
			if body.UseDefault == nil {
				f.Add("OidcCustomSub", "use_default", apierr.CodeMissingField)
			} else {
				v.UseDefault = *body.UseDefault
			}
		}
		if !v.UseDefault {
			if body.Keys == nil {
				f.Add("OidcCustomSub", "include_claim_keys", apierr.CodeMissingField)
			} else {
				v.Keys = checkClaimKeys(&f, *body.Keys)
			}
		}
		if err := f.Err(); err != nil {
			if p.Scope == ScopeRepo {
				return apierr.Simple(err) // the repository's operation answers validation-error-simple
			}
			return err
		}
		if err := h.Service.setPlaceSetting(r.Context(), p, settingOIDCSub, v); err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusCreated, map[string]any{})
		return nil
	}
}

// checkClaimKeys adds a field error for a key that is empty, not
// alphanumeric with underscores, or repeated; the keys.
func checkClaimKeys(f *apierr.Fields, keys []string) []string {
	seen := map[string]bool{}
	for _, k := range keys {
		if !claimKeyPattern.MatchString(k) || seen[k] {
			f.Addf("OidcCustomSub", "include_claim_keys", "Claim key %q must be unique and hold only letters, digits and underscores", k)
		}
		seen[k] = true
	}
	if len(keys) == 0 {
		f.Addf("OidcCustomSub", "include_claim_keys", "include_claim_keys must name at least one claim key")
	}
	return keys
}

// selfHostedJSON is self-hosted-runners-settings.
type selfHostedJSON struct {
	EnabledRepositories     string `json:"enabled_repositories"`
	SelectedRepositoriesURL string `json:"selected_repositories_url,omitempty"`
}

// getSelfHosted answers GET /orgs/{org}/actions/permissions/self-hosted-runners.
func (h *Handler) getSelfHosted(w http.ResponseWriter, r *http.Request) error {
	org := accounts.OrgFrom(r.Context())
	mode, err := h.Service.SelfHosted(r.Context(), org.ID)
	if err != nil {
		return err
	}
	j := selfHostedJSON{EnabledRepositories: mode}
	if mode == "selected" {
		j.SelectedRepositoriesURL = httpapi.BaseURL(r.Context()) + "/orgs/" + org.Login +
			"/actions/permissions/self-hosted-runners/repositories"
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// setSelfHosted answers PUT /orgs/{org}/actions/permissions/self-hosted-runners:
// enabled_repositories all, selected or none.
func (h *Handler) setSelfHosted(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Enabled *string `json:"enabled_repositories"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Enabled == nil {
		return apierr.Invalid("SelfHostedRunnersSettings", "enabled_repositories", apierr.CodeMissingField)
	}
	if *body.Enabled != "all" && *body.Enabled != "selected" && *body.Enabled != "none" {
		return apierr.Validation(apierr.FieldError{Resource: "SelfHostedRunnersSettings", Field: "enabled_repositories",
			Code: apierr.CodeInvalid, Message: "enabled_repositories must be one of all, selected or none"})
	}
	org := accounts.OrgFrom(r.Context())
	if err := h.Service.setPlaceSetting(r.Context(), OrgPlace(org.ID), settingSelfHosted,
		map[string]string{"enabled_repositories": *body.Enabled}); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}
