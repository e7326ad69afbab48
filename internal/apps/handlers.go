package apps

import (
	"context"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

func isNotFound(err error) bool { return errors.Is(err, store.ErrNotFound) }

// caller returns the app the request's JWT authenticated.
func (h *Handler) caller(ctx context.Context) (*App, error) {
	p := auth.PrincipalFrom(ctx)
	if p.App == nil { // the route's rule lets no one else through
		return nil, apierr.Unauthorized("A JSON web token could not be decoded")
	}
	a, err := ByID(ctx, h.Service.DB, p.App.ID)
	return a, err
}

// getApp serves GET /app: the app itself, with its installations_count.
func (h *Handler) getApp(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	a, err := h.caller(ctx)
	if err != nil {
		return err
	}
	owner, err := accounts.ByID(ctx, h.Service.DB, a.OwnerID)
	if err != nil {
		return err
	}
	n, err := InstallationsCount(ctx, h.Service.DB, a.ID)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toIntegration(httpapi.BaseURL(ctx), a, owner, &n))
	return nil
}

// getAppBySlug serves GET /apps/{app_slug}: a public app to anyone, a
// private one to its owner (and its organization's members) only.
func (h *Handler) getAppBySlug(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	a, err := BySlug(ctx, h.Service.DB, r.PathValue("app_slug"))
	if err != nil {
		return err
	}
	owner, err := accounts.ByID(ctx, h.Service.DB, a.OwnerID)
	if err != nil {
		return err
	}
	if !a.Public {
		ok, err := seesPrivateApp(ctx, h.Service.DB, auth.PrincipalFrom(ctx), owner)
		if err != nil {
			return err
		}
		if !ok {
			return apierr.NotFound()
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, toIntegration(httpapi.BaseURL(ctx), a, owner, nil))
	return nil
}

// seesPrivateApp reports whether the caller may see a private app of the
// owner: the owner itself, or a member of the owning organization.
func seesPrivateApp(ctx context.Context, q store.Q, p *auth.Principal, owner *accounts.Account) (bool, error) {
	if p.Account == nil || p.Token != nil && p.Token.Kind == auth.KindInstallation {
		return false, nil
	}
	if p.Account.ID == owner.ID {
		return true, nil
	}
	if !owner.IsOrg() {
		return false, nil
	}
	role, err := accounts.MemberRole(ctx, q, owner.ID, p.Account.ID)
	return role != "", err
}

// renderInstallation renders an installation of the app with its account
// and the user who suspended it.
func (h *Handler) renderInstallation(ctx context.Context, a *App, inst *Installation) (installationJSON, error) {
	return renderInstallation(ctx, h.Service.DB, httpapi.BaseURL(ctx), a, inst)
}

// InstallationJSON renders an installation of the app as the platform's
// installation object with URLs under base (for the admin command line).
func InstallationJSON(ctx context.Context, q store.Q, base string, a *App, inst *Installation) (any, error) {
	return renderInstallation(ctx, q, base, a, inst)
}

func renderInstallation(ctx context.Context, q store.Q, base string, a *App, inst *Installation) (installationJSON, error) {
	account, err := accounts.ByID(ctx, q, inst.AccountID)
	if err != nil {
		return installationJSON{}, err
	}
	var by *accounts.Account
	if inst.SuspendedByID != nil {
		if by, err = accounts.ByID(ctx, q, *inst.SuspendedByID); err != nil && !isNotFound(err) {
			return installationJSON{}, err
		}
	}
	return toInstallation(base, a, inst, account, by), nil
}

// writeInstallation answers 200 with the installation.
func (h *Handler) writeInstallation(w http.ResponseWriter, r *http.Request, a *App, inst *Installation) error {
	j, err := h.renderInstallation(r.Context(), a, inst)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// repoJSONs renders repositories as the platform's repository objects.
func repoJSONs(ctx context.Context, q store.Q, rs []*repos.Repository) ([]repos.JSON, error) {
	out := make([]repos.JSON, 0, len(rs))
	for _, r := range rs {
		st, err := repos.StatsOf(ctx, q, r.ID)
		if err != nil {
			return nil, err
		}
		out = append(out, repos.ToJSON(repos.URLsOf(ctx), r, st, auth.RoleNone))
	}
	return out, nil
}
