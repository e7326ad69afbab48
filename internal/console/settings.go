package console

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/oauth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// settingsPage lists where the signed-in user can go: the repositories
// and organizations whose webhooks they administer.
type settingsPage struct {
	Repos []*repos.Repository
	Orgs  []*accounts.Account
}

// settings serves GET /settings, the console's home.
func (h *Handler) settings(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	ctx := r.Context()
	var page settingsPage
	own, err := repos.ByOwner(ctx, h.DB, u.userID)
	if err != nil {
		return err
	}
	page.Repos = own
	orgs, err := accounts.OrgsOfMember(ctx, h.DB, u.userID, false, 100, 0)
	if err != nil {
		return err
	}
	for _, org := range orgs {
		role, err := accounts.MemberRole(ctx, h.DB, org.ID, u.userID)
		if err != nil {
			return err
		}
		if role != accounts.RoleOwner {
			continue
		}
		page.Orgs = append(page.Orgs, org)
		orgRepos, err := repos.ByOwner(ctx, h.DB, org.ID)
		if err != nil {
			return err
		}
		page.Repos = append(page.Repos, orgRepos...)
	}
	h.render(w, r, v, http.StatusOK, "settings", page)
	return nil
}

// tokenScopes are the classic scopes the token form offers.
var tokenScopes = []string{"repo", "public_repo", "admin:repo_hook", "write:repo_hook", "read:repo_hook",
	"admin:org", "read:org", "admin:org_hook", "user", "read:user", "user:email", "delete_repo", "read:audit_log"}

// tokensPage lists the user's personal access tokens; Created is the
// token just made, shown this once.
type tokensPage struct {
	Tokens  []auth.TokenInfo
	Scopes  []string
	Created string
	Note    string
	Error   string
}

// personalKinds are the token kinds the page lists: the user's own
// personal access tokens (OAuth tokens are under the applications).
func personalKind(k auth.Kind) bool { return k == auth.KindClassic || k == auth.KindFineGrained }

func (h *Handler) personalTokens(r *http.Request, userID int64) ([]auth.TokenInfo, error) {
	all, err := auth.ListTokens(r.Context(), h.DB, userID)
	if err != nil {
		return nil, err
	}
	var out []auth.TokenInfo
	for _, t := range all {
		if personalKind(t.Kind) {
			out = append(out, t)
		}
	}
	return out, nil
}

// tokens serves GET /settings/tokens.
func (h *Handler) tokens(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	return h.renderTokens(w, r, v, u, http.StatusOK, tokensPage{})
}

func (h *Handler) renderTokens(w http.ResponseWriter, r *http.Request, v *visit, u *session, status int, page tokensPage) error {
	list, err := h.personalTokens(r, u.userID)
	if err != nil {
		return err
	}
	page.Tokens, page.Scopes = list, tokenScopes
	h.render(w, r, v, status, "tokens", page)
	return nil
}

// maxNoteLength bounds a token's note, as the API does.
const maxNoteLength = 1024

// createToken serves POST /settings/tokens: a classic personal access
// token with the note, the checked scopes and an expiry in days (none
// for "0"). The page shows its value once; only its hash is kept.
func (h *Handler) createToken(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	note := strings.TrimSpace(r.PostForm.Get("note"))
	var scopes auth.Scopes
	for _, s := range r.PostForm["scopes"] {
		if !auth.ValidScope(s) {
			return h.renderTokens(w, r, v, u, http.StatusUnprocessableEntity, tokensPage{Note: note, Error: "Unknown scope " + strconv.Quote(s) + "."})
		}
		scopes = append(scopes, s)
	}
	if note == "" || len(note) > maxNoteLength {
		return h.renderTokens(w, r, v, u, http.StatusUnprocessableEntity, tokensPage{Note: note, Error: "A note of 1 to 1024 characters is required."})
	}
	days, err := strconv.Atoi(r.PostForm.Get("expires_in_days"))
	if err != nil || days < 0 || days > 366 {
		return h.renderTokens(w, r, v, u, http.StatusUnprocessableEntity, tokensPage{Note: note, Error: "Choose an expiration."})
	}
	spec := auth.TokenSpec{Kind: auth.KindClassic, UserID: u.userID, Scopes: scopes, Note: note}
	if days > 0 {
		at := h.now().UTC().Add(time.Duration(days) * 24 * time.Hour).Truncate(time.Second)
		spec.ExpiresAt = &at
	}
	created, err := auth.CreateToken(r.Context(), h.DB, spec)
	if err != nil {
		return err
	}
	return h.renderTokens(w, r, v, u, http.StatusCreated, tokensPage{Created: created.Value})
}

// revokeToken serves POST /settings/tokens/{token_id}/revoke for one of
// the user's personal tokens (any other id is a 404).
func (h *Handler) revokeToken(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	id, err := strconv.ParseInt(r.PathValue("token_id"), 10, 64)
	if err != nil {
		return notFound()
	}
	list, err := h.personalTokens(r, u.userID)
	if err != nil {
		return err
	}
	for _, t := range list {
		if t.ID == id {
			if err := auth.RevokeToken(r.Context(), h.DB, id); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
			return seeOther(w, r, TokensPath)
		}
	}
	return notFound()
}

// applicationsPage lists the OAuth apps the user authorized.
type applicationsPage struct {
	Grants []*oauth.Grant
}

// applications serves GET /settings/applications.
func (h *Handler) applications(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	grants, _, err := h.OAuth.ListGrants(r.Context(), u.userID, oauth.Filter{Limit: 100})
	if err != nil {
		return err
	}
	h.render(w, r, v, http.StatusOK, "applications", applicationsPage{Grants: grants})
	return nil
}

// revokeGrant serves POST /settings/applications/{grant_id}/revoke: the
// grant and every token the app holds for the user go.
func (h *Handler) revokeGrant(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	id, err := strconv.ParseInt(r.PathValue("grant_id"), 10, 64)
	if err != nil {
		return notFound()
	}
	if err := h.OAuth.DeleteGrant(r.Context(), u.userID, id); err != nil {
		return err
	}
	return seeOther(w, r, ApplicationsPath)
}
