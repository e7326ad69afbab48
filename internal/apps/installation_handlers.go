package apps

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// callerInstallation returns the calling app and its installation named
// by the path's installation_id (404 when the app has no such one).
func (h *Handler) callerInstallation(r *http.Request) (*App, *Installation, error) {
	a, err := h.caller(r.Context())
	if err != nil {
		return nil, nil, err
	}
	id, err := httpapi.PathInt64(r, "installation_id")
	if err != nil {
		return nil, nil, err
	}
	inst, err := InstallationByID(r.Context(), h.Service.DB, a.ID, id)
	if err != nil {
		return nil, nil, err
	}
	return a, inst, nil
}

// listInstallations serves GET /app/installations.
func (h *Handler) listInstallations(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	a, err := h.caller(ctx)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	all, err := Installations(ctx, h.Service.DB, a.ID)
	if err != nil {
		return err
	}
	out := []installationJSON{}
	for _, inst := range httpapi.Slice(page, all) {
		j, err := h.renderInstallation(ctx, a, inst)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, len(all))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getInstallation serves GET /app/installations/{installation_id}.
func (h *Handler) getInstallation(w http.ResponseWriter, r *http.Request) error {
	a, inst, err := h.callerInstallation(r)
	if err != nil {
		return err
	}
	return h.writeInstallation(w, r, a, inst)
}

// deleteInstallation serves DELETE /app/installations/{installation_id}:
// the app uninstalls itself; the installation's tokens stop at once.
func (h *Handler) deleteInstallation(w http.ResponseWriter, r *http.Request) error {
	a, inst, err := h.callerInstallation(r)
	if err != nil {
		return err
	}
	bot, err := accounts.ByID(r.Context(), h.Service.DB, a.BotID)
	if err != nil {
		return err
	}
	if err := h.Service.Uninstall(r.Context(), a, inst, bot); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// suspend serves PUT /app/installations/{installation_id}/suspended.
func (h *Handler) suspend(w http.ResponseWriter, r *http.Request) error {
	return h.setSuspended(w, r, true)
}

// unsuspend serves DELETE /app/installations/{installation_id}/suspended.
func (h *Handler) unsuspend(w http.ResponseWriter, r *http.Request) error {
	return h.setSuspended(w, r, false)
}

// setSuspended suspends the path's installation or lifts its suspension,
// as the app's bot.
func (h *Handler) setSuspended(w http.ResponseWriter, r *http.Request, suspend bool) error {
	a, inst, err := h.callerInstallation(r)
	if err != nil {
		return err
	}
	bot, err := accounts.ByID(r.Context(), h.Service.DB, a.BotID)
	if err != nil {
		return err
	}
	if err := h.Service.Suspend(r.Context(), a, inst, suspend, bot); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// createToken serves POST /app/installations/{installation_id}/access_tokens.
func (h *Handler) createToken(w http.ResponseWriter, r *http.Request) error {
	a, inst, err := h.callerInstallation(r)
	if err != nil {
		return err
	}
	var req TokenRequest
	if r.ContentLength != 0 {
		if err := httpapi.DecodeJSON(r, &req); err != nil {
			return err
		}
	}
	m, err := h.Service.Mint(r.Context(), a, inst, req)
	if err != nil {
		return err
	}
	j := tokenJSON{Token: m.Token, ExpiresAt: wire.T(m.ExpiresAt), Permissions: m.Permissions, RepositorySelection: m.Selection}
	if m.Selection == SelectionSelected {
		if j.Repositories, err = repoJSONs(r.Context(), h.Service.DB, m.Repositories); err != nil {
			return err
		}
	}
	httpapi.WriteJSON(w, http.StatusCreated, j)
	return nil
}

// getRepoInstallation serves GET /repos/{owner}/{repo}/installation: the
// calling app's installation that reaches the repository.
func (h *Handler) getRepoInstallation(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	a, err := h.caller(ctx)
	if err != nil {
		return err
	}
	repo, err := repos.ByOwnerAndName(ctx, h.Service.DB, r.PathValue("owner"), r.PathValue("repo"))
	if err != nil {
		return err
	}
	inst, err := InstallationOn(ctx, h.Service.DB, a.ID, repo.Owner.ID)
	if err != nil {
		return err
	}
	if !inst.Selects(repo) {
		return apierr.NotFound()
	}
	return h.writeInstallation(w, r, a, inst)
}

// getOrgInstallation serves GET /orgs/{org}/installation.
func (h *Handler) getOrgInstallation(w http.ResponseWriter, r *http.Request) error {
	return h.accountInstallation(w, r, r.PathValue("org"), true)
}

// getUserInstallation serves GET /users/{username}/installation.
func (h *Handler) getUserInstallation(w http.ResponseWriter, r *http.Request) error {
	return h.accountInstallation(w, r, r.PathValue("username"), false)
}

// accountInstallation answers with the calling app's installation on the
// account with the login (an organization when org is set).
func (h *Handler) accountInstallation(w http.ResponseWriter, r *http.Request, login string, org bool) error {
	ctx := r.Context()
	a, err := h.caller(ctx)
	if err != nil {
		return err
	}
	account, err := accounts.ByLogin(ctx, h.Service.DB, login)
	if err != nil || account.IsOrg() != org || account.Type == accounts.TypeBot {
		return err
	}
	inst, err := InstallationOn(ctx, h.Service.DB, a.ID, account.ID)
	if err != nil {
		return err
	}
	return h.writeInstallation(w, r, a, inst)
}

// listInstallationRepos serves GET /installation/repositories: the
// repositories the calling installation token reaches.
func (h *Handler) listInstallationRepos(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	t := auth.PrincipalFrom(ctx).Token
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	var rs []*repos.Repository
	selection := SelectionSelected
	if t.AllRepositories {
		selection = SelectionAll
		rs, err = repos.ByOwner(ctx, h.Service.DB, t.ResourceOwnerID)
	} else {
		rs, err = reposByID(ctx, h.Service.DB, t.RepositoryIDs)
	}
	if err != nil {
		return err
	}
	items, err := repoJSONs(ctx, h.Service.DB, httpapi.Slice(page, rs))
	if err != nil {
		return err
	}
	httpapi.SetLinks(w, r, page, len(rs))
	httpapi.WriteJSON(w, http.StatusOK, installationReposJSON{TotalCount: len(rs), RepositorySelection: selection, Repositories: items})
	return nil
}

// revokeToken serves DELETE /installation/token: the calling token is
// revoked.
func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request) error {
	t := auth.PrincipalFrom(r.Context()).Token
	if err := auth.RevokeToken(r.Context(), h.Service.DB, t.ID); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}
