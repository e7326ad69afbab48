package oauthweb

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// AuthorizeRequest is the query of GET /login/oauth/authorize.
type AuthorizeRequest struct {
	ClientID            string
	RedirectURI         string // optional: the application's callback URL when empty
	Scope               string // space or comma separated classic scopes (ignored for apps)
	State               string
	Login               string // the account suggested for signing in
	CodeChallenge       string // PKCE
	CodeChallengeMethod string // S256 (the only method the platform takes), or empty
	AllowSignup         string // accepted and ignored: forgeapi has no sign-up
}

// AuthorizeRequestFrom reads an AuthorizeRequest from a query or form.
func AuthorizeRequestFrom(v url.Values) AuthorizeRequest {
	return AuthorizeRequest{ClientID: v.Get("client_id"), RedirectURI: v.Get("redirect_uri"), Scope: v.Get("scope"),
		State: v.Get("state"), Login: v.Get("login"), CodeChallenge: v.Get("code_challenge"),
		CodeChallengeMethod: v.Get("code_challenge_method"), AllowSignup: v.Get("allow_signup")}
}

// Values returns the request as the query of GET /login/oauth/authorize
// (empty fields left out), for a form that carries it on.
func (r AuthorizeRequest) Values() url.Values {
	v := url.Values{}
	for k, x := range map[string]string{"client_id": r.ClientID, "redirect_uri": r.RedirectURI, "scope": r.Scope,
		"state": r.State, "login": r.Login, "code_challenge": r.CodeChallenge,
		"code_challenge_method": r.CodeChallengeMethod, "allow_signup": r.AllowSignup} {
		if x != "" {
			v.Set(k, x)
		}
	}
	return v
}

// Consent is what the consent page shows.
type Consent struct {
	AppName     string
	OwnerLogin  string
	HomepageURL string
	// Scopes are the scopes asked, normalised (none for an app, whose
	// access is its permissions).
	Scopes []string
	// IsApp is set for an app (internal/apps), clear for an OAuth app.
	IsApp bool
	// Permissions are an app's permissions, which its user token acts with.
	Permissions auth.Grant
	// RedirectURI is where the flow ends: the request's or the callback URL.
	RedirectURI string
	// AlreadyGranted is set when the user's grant covers the scopes (an
	// app: the user holds one of its tokens): the page then approves at
	// once, as the platform does.
	AlreadyGranted bool
}

// ErrorPage is an error the authorize page shows itself, never redirecting:
// an unknown client or a redirect_uri the application does not allow.
type ErrorPage struct {
	Status  int    // HTTP status of the page
	Code    string // the platform's error code, e.g. redirect_uri_mismatch
	Message string // for people
}

func (e *ErrorPage) Error() string { return e.Code + ": " + e.Message }

// ErrorRedirect is an error the application learns of by a redirect to
// URL, which carries error, error_description, error_uri and state.
type ErrorRedirect struct {
	URL         string
	Code        string
	Description string
}

func (e *ErrorRedirect) Error() string { return e.Code + ": " + e.Description }

// checked is a request that Check accepted.
type checked struct {
	client   *client
	redirect string // where to send the user
	scopes   auth.Scopes
}

// Check validates an authorize request for the signed-in user and returns
// what the consent page shows. An unknown client or a redirect_uri the
// application's callback URL does not allow (RedirectAllowed) is an
// *ErrorPage; a code_challenge_method other than S256 is an
// *ErrorRedirect with error=invalid_request. Unknown scopes are dropped,
// as the platform drops them.
func (s *Service) Check(ctx context.Context, userID int64, r AuthorizeRequest) (*Consent, error) {
	c, err := s.check(ctx, r)
	if err != nil {
		return nil, err
	}
	con := &Consent{AppName: c.client.Name, OwnerLogin: c.client.OwnerLogin, HomepageURL: c.client.HomepageURL,
		Scopes: c.scopes, IsApp: c.client.IsApp(), RedirectURI: c.redirect}
	if con.Scopes == nil {
		con.Scopes = []string{}
	}
	if c.client.IsApp() {
		con.Permissions = c.client.App.Permissions
	}
	con.AlreadyGranted, err = s.granted(ctx, userID, c)
	if err != nil {
		return nil, err
	}
	return con, nil
}

func (s *Service) check(ctx context.Context, r AuthorizeRequest) (*checked, error) {
	c, err := clientByID(ctx, s.DB, r.ClientID)
	if errors.Is(err, store.ErrNotFound) {
		return nil, &ErrorPage{Status: http.StatusNotFound, Code: "not_found",
			Message: "There is no application with this client_id."}
	}
	if err != nil {
		return nil, err
	}
	redirect := r.RedirectURI
	if redirect == "" {
		redirect = c.CallbackURL
	}
	if c.CallbackURL == "" || !RedirectAllowed(c.CallbackURL, redirect) {
		return nil, &ErrorPage{Status: http.StatusBadRequest, Code: "redirect_uri_mismatch",
			Message: "The redirect_uri is not associated with this application."}
	}
	out := &checked{client: c, redirect: redirect}
	if r.CodeChallengeMethod != "" && r.CodeChallengeMethod != "S256" || r.CodeChallenge == "" && r.CodeChallengeMethod != "" ||
		r.CodeChallenge != "" && !validChallenge(r.CodeChallenge) {
		return nil, errorRedirect(ctx, out, r.State, "invalid_request",
			"code_challenge must be a base64url SHA-256 of the code_verifier, with code_challenge_method S256.")
	}
	if !c.IsApp() {
		for _, sc := range auth.ParseScopes(r.Scope) {
			if auth.ValidScope(sc) {
				out.scopes = append(out.scopes, sc)
			}
		}
		out.scopes = out.scopes.Normalize()
	}
	return out, nil
}

// validChallenge reports whether c is a 43-character base64url string:
// the S256 challenge of a code verifier.
func validChallenge(c string) bool {
	return len(c) == 43 && !slices.ContainsFunc([]byte(c), func(b byte) bool {
		return !(b >= 'A' && b <= 'Z' || b >= 'a' && b <= 'z' || b >= '0' && b <= '9' || b == '-' || b == '_')
	})
}

// granted reports whether the user already granted the client what the
// request asks: an OAuth app's grant covers the scopes, or the user holds
// a live refresh token of the app.
func (s *Service) granted(ctx context.Context, userID int64, c *checked) (bool, error) {
	if c.client.IsApp() {
		var n int
		err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM app_refresh_tokens WHERE app_id = $1 AND user_id = $2
			AND expires_at > $3`, c.client.App.ID, userID, s.now()).Scan(&n)
		return n > 0, err
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT scopes FROM tokens WHERE user_id = $1 AND app_id = $2 AND kind = 'oauth'`,
		userID, c.client.OAuthApp.ID)
	if err != nil {
		return false, err
	}
	defer rows.Close()
	var have auth.Scopes
	found := false
	for rows.Next() {
		var sc string
		if err := rows.Scan(&sc); err != nil {
			return false, err
		}
		found = true
		have = append(have, auth.ParseScopes(sc)...)
	}
	if err := rows.Err(); err != nil || !found {
		return false, err
	}
	for _, want := range c.scopes {
		if !have.Grants(want) {
			return false, nil
		}
	}
	return true, nil
}

// Approve records the user's consent and returns the redirect URL with a
// new single-use code (valid for CodeLifetime) and the request's state.
// It checks the request as Check does and fails with the same errors.
func (s *Service) Approve(ctx context.Context, userID int64, r AuthorizeRequest) (string, error) {
	c, err := s.check(ctx, r)
	if err != nil {
		return "", err
	}
	if err := s.sweep(ctx); err != nil {
		return "", err
	}
	code := auth.RandomString(20)
	now := s.now()
	oauthAppID, appID := c.client.ids()
	_, err = s.DB.ExecContext(ctx, `
		INSERT INTO oauth_codes (code_hash, oauth_app_id, app_id, user_id, scopes, redirect_uri, code_challenge,
		                         code_challenge_method, expires_at, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		auth.HashToken(code), oauthAppID, appID, userID, joinScopes(c.scopes), r.RedirectURI, r.CodeChallenge,
		r.CodeChallengeMethod, now.Add(CodeLifetime), now)
	if err != nil {
		return "", store.Normalize(err)
	}
	return withQuery(c.redirect, url.Values{"code": {code}}, r.State), nil
}

// Deny returns the redirect URL that tells the application the user
// refused: error=access_denied with the request's state.
func (s *Service) Deny(ctx context.Context, r AuthorizeRequest) (string, error) {
	c, err := s.check(ctx, r)
	if err != nil {
		return "", err
	}
	e := errorRedirect(ctx, c, r.State, "access_denied", "The user has denied your application access.")
	return e.URL, nil
}

// errorRedirect is the redirect to the client's redirect URI with the error.
func errorRedirect(ctx context.Context, c *checked, state, code, description string) *ErrorRedirect {
	q := url.Values{"error": {code}, "error_description": {description}, "error_uri": {ErrorURI(ctx, code)}}
	return &ErrorRedirect{URL: withQuery(c.redirect, q, state), Code: code, Description: description}
}

// withQuery adds q and, when not empty, state to the query of u.
func withQuery(u string, q url.Values, state string) string {
	parsed, err := url.Parse(u)
	if err != nil {
		return u // checked by RedirectAllowed before
	}
	all := parsed.Query()
	for k, v := range q {
		all[k] = v
	}
	if state != "" {
		all.Set("state", state)
	}
	parsed.RawQuery = all.Encode()
	return parsed.String()
}

// ids returns the client's oauth_apps id and apps id as nullable columns.
func (c *client) ids() (oauthAppID, appID *int64) {
	if c.OAuthApp != nil {
		return &c.OAuthApp.ID, nil
	}
	return nil, &c.App.ID
}

// ErrorURI is the error_uri of an error code: its entry in the served
// documentation (docs/oauth.md), under the base URL of ctx.
func ErrorURI(ctx context.Context, code string) string {
	return httpapi.WebBase(httpapi.BaseURL(ctx)) + "/docs/oauth#" + strings.ReplaceAll(code, "_", "-")
}

func joinScopes(s auth.Scopes) string {
	out := ""
	for i, v := range s.Normalize() {
		if i > 0 {
			out += " "
		}
		out += v
	}
	return out
}
