package accounts

import (
	"context"
	"net/http"
	"net/url"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// MaxSocialAccounts is how many social accounts a profile shows, as on
// the platform.
const MaxSocialAccounts = 4

// maxSocialURL bounds a social account's address.
const maxSocialURL = 2048

// SocialAccount is a link of a user's profile.
type SocialAccount struct {
	Provider string `json:"provider"`
	URL      string `json:"url"`
}

// socialProviders name the providers the platform tells by host.
var socialProviders = map[string]string{
	"twitter.com": "twitter", "x.com": "twitter", "facebook.com": "facebook", "linkedin.com": "linkedin",
	"instagram.com": "instagram", "youtube.com": "youtube", "youtu.be": "youtube", "reddit.com": "reddit",
	"twitch.tv": "twitch", "npmjs.com": "npm",
}

// SocialProvider is the provider of a social account's address: a known
// host (any www. or subdomain), "mastodon" for a /@user path on another
// host, "generic" otherwise.
func SocialProvider(u *url.URL) string {
	host := strings.ToLower(u.Hostname())
	for {
		if p, ok := socialProviders[host]; ok {
			return p
		}
		_, rest, ok := strings.Cut(host, ".")
		if !ok || !strings.Contains(rest, ".") {
			break
		}
		host = rest
	}
	if strings.HasPrefix(u.Path, "/@") && len(u.Path) > 2 {
		return "mastodon"
	}
	return "generic"
}

// SocialAccounts are the user's social accounts, in the order they were
// added.
func SocialAccounts(ctx context.Context, q store.Q, userID int64) ([]SocialAccount, error) {
	rows, err := q.QueryContext(ctx, `SELECT provider, url FROM social_accounts WHERE user_id = $1 ORDER BY created_at, url`, userID)
	return store.ScanAll(rows, err, func(s store.Scanner) (SocialAccount, error) {
		var a SocialAccount
		return a, s.Scan(&a.Provider, &a.URL)
	})
}

// socialBody reads {"account_urls": [...]}: 1 or more http(s) addresses.
func socialBody(r *http.Request) ([]*url.URL, error) {
	var body struct {
		AccountURLs *[]string `json:"account_urls"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return nil, err
	}
	if body.AccountURLs == nil || len(*body.AccountURLs) == 0 {
		return nil, apierr.Invalid("SocialAccount", "account_urls", apierr.CodeMissingField)
	}
	var out []*url.URL
	for _, s := range *body.AccountURLs {
		u, err := url.Parse(strings.TrimSpace(s))
		if err != nil || u.Scheme != "http" && u.Scheme != "https" || u.Host == "" || len(s) > maxSocialURL {
			return nil, apierr.Custom("SocialAccount", "account_urls", "%s is not a valid URL", s)
		}
		out = append(out, u)
	}
	return out, nil
}

// socialRule is the rule of the caller's own social accounts: classic
// and OAuth tokens need user to change them, fine-grained tokens Profile
// (write).
func socialRule(write bool) auth.Rule {
	rule := auth.Rule{Target: auth.TargetSelf, Unauthorized401: true, TokenTypes: auth.UAT | auth.FPAT}
	if write {
		rule.Scopes = []string{"user"}
		rule.Permissions = auth.Perm("profile:write")
	}
	return rule
}

// writeSocial answers the user's social accounts that only names.
func (h *Handler) writeSocial(w http.ResponseWriter, r *http.Request, status int, userID int64, only map[string]bool) error {
	list, err := SocialAccounts(r.Context(), h.DB, userID)
	if err != nil {
		return err
	}
	out := []SocialAccount{}
	for _, a := range list {
		if only[a.URL] {
			out = append(out, a)
		}
	}
	httpapi.WriteJSON(w, status, out)
	return nil
}

// listSocial answers a page of the user's social accounts.
func (h *Handler) listSocial(w http.ResponseWriter, r *http.Request, userID int64) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, err := SocialAccounts(r.Context(), h.DB, userID)
	if err != nil {
		return err
	}
	httpapi.SetLinks(w, r, page, len(list))
	out := httpapi.Slice(page, list)
	if out == nil {
		out = []SocialAccount{}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listOwnSocial answers GET /user/social_accounts, paged.
func (h *Handler) listOwnSocial(w http.ResponseWriter, r *http.Request) error {
	return h.listSocial(w, r, auth.PrincipalFrom(r.Context()).UserID())
}

// listUserSocial answers GET /users/{username}/social_accounts, paged.
func (h *Handler) listUserSocial(w http.ResponseWriter, r *http.Request) error {
	return h.listSocial(w, r, UserFrom(r.Context()).ID)
}

// addSocial answers POST /user/social_accounts: the addresses added (an
// address the profile has already stays); more than MaxSocialAccounts in
// all is a 422. 201 with the accounts the request named.
func (h *Handler) addSocial(w http.ResponseWriter, r *http.Request) error {
	urls, err := socialBody(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	id := auth.PrincipalFrom(ctx).UserID()
	named := map[string]bool{}
	err = h.DB.Tx(ctx, func(tx *store.Tx) error {
		for _, u := range urls {
			named[u.String()] = true
			if _, err := tx.ExecContext(ctx, `INSERT INTO social_accounts (user_id, url, provider, created_at) VALUES ($1, $2, $3, $4)
				ON CONFLICT (user_id, url) DO NOTHING`, id, u.String(), SocialProvider(u), tx.Now()); err != nil {
				return store.Normalize(err)
			}
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM social_accounts WHERE user_id = $1`, id).Scan(&n); err != nil {
			return store.Normalize(err)
		}
		if n > MaxSocialAccounts {
			return apierr.Custom("SocialAccount", "account_urls", "A profile can have at most %d social accounts", MaxSocialAccounts)
		}
		return nil
	})
	if err != nil {
		return err
	}
	return h.writeSocial(w, r, http.StatusCreated, id, named)
}

// deleteSocial answers DELETE /user/social_accounts: the addresses
// removed (204); one the profile does not have is a 422.
func (h *Handler) deleteSocial(w http.ResponseWriter, r *http.Request) error {
	urls, err := socialBody(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	id := auth.PrincipalFrom(ctx).UserID()
	err = h.DB.Tx(ctx, func(tx *store.Tx) error {
		for _, u := range urls {
			n, err := store.Affected(tx.ExecContext(ctx, `DELETE FROM social_accounts WHERE user_id = $1 AND url = $2`, id, u.String()))
			if err != nil {
				return err
			}
			if n == 0 {
				return apierr.Custom("SocialAccount", "account_urls", "%s is not one of your social accounts", u.String())
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}
