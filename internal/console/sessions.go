package console

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// Cookies of the console. The session cookie holds a random id whose
// SHA-256 is the console_sessions row; the CSRF cookie is a visitor's
// token before any session exists (the sign-in form), checked by double
// submission. Both are HttpOnly and SameSite=Lax, and Secure on TLS.
const (
	SessionCookie = "forgeapi_session"
	CSRFCookie    = "forgeapi_csrf"
	// CSRFField is the form field every form carries its token in.
	CSRFField = "authenticity_token"
)

// Session states.
const (
	stateOTP    = "otp"    // the password was right; the one-time password is awaited
	stateActive = "active" // signed in
)

// session is a console_sessions row.
type session struct {
	idHash    string
	userID    int64
	login     string
	state     string
	csrf      string
	expiresAt time.Time
}

// visit is what a page knows of its visitor: the session (nil for none or
// an expired one) and the CSRF token its forms carry.
type visit struct {
	session *session
	csrf    string
}

// User returns the signed-in user, nil when the visitor is not signed
// in (a session waiting for its one-time password is not).
func (v *visit) User() *session {
	if v.session == nil || v.session.state != stateActive {
		return nil
	}
	return v.session
}

// principal is the signed-in user as the access rules see a person.
func (v *visit) principal() *auth.Principal {
	u := v.User()
	return &auth.Principal{Account: &auth.Account{ID: u.userID, Login: u.login, Type: accounts.TypeUser}, Method: auth.MethodPassword}
}

func randomToken() string {
	b := make([]byte, 32)
	_, _ = rand.Read(b) // never fails (crypto/rand)
	return base64.RawURLEncoding.EncodeToString(b)
}

func hashID(id string) string {
	sum := sha256.Sum256([]byte(id))
	return hex.EncodeToString(sum[:])
}

// secure reports whether cookies must be Secure: the request came over
// TLS, or the server's public URL is https.
func secure(r *http.Request) bool {
	return r.TLS != nil || strings.HasPrefix(httpapi.BaseURL(r.Context()), "https://")
}

func setCookie(w http.ResponseWriter, r *http.Request, name, value string, expires time.Time) {
	c := &http.Cookie{Name: name, Value: value, Path: "/", HttpOnly: true, SameSite: http.SameSiteLaxMode, Secure: secure(r)}
	if value == "" {
		c.MaxAge = -1
	} else if !expires.IsZero() {
		c.Expires = expires
	}
	http.SetCookie(w, c)
}

// newVisit reads the visitor's session and CSRF token; a visitor with
// neither gets a new CSRF cookie.
func (h *Handler) newVisit(w http.ResponseWriter, r *http.Request) (*visit, error) {
	v := &visit{}
	if c, err := r.Cookie(SessionCookie); err == nil && c.Value != "" {
		s, err := h.loadSession(r.Context(), c.Value)
		switch {
		case errors.Is(err, store.ErrNotFound):
			setCookie(w, r, SessionCookie, "", time.Time{}) // ended or expired: forget it
		case err != nil:
			return nil, err
		default:
			v.session, v.csrf = s, s.csrf
			return v, nil
		}
	}
	if c, err := r.Cookie(CSRFCookie); err == nil && len(c.Value) >= 32 {
		v.csrf = c.Value
		return v, nil
	}
	v.csrf = randomToken()
	if r.Method != http.MethodPost { // a POST without the cookie fails its check anyway
		setCookie(w, r, CSRFCookie, v.csrf, time.Time{})
	}
	return v, nil
}

// errCSRF refuses a form posted without its token.
var errCSRF = &pageError{Status: http.StatusForbidden, Title: "Form expired",
	Message: "This form could not be verified (its security token is missing or stale). Go back, reload the page and try again."}

// checkCSRF compares the posted token with the visit's, in constant time.
// A request from another origin (Origin or Sec-Fetch-Site) is refused as
// well.
func (v *visit) checkCSRF(r *http.Request) error {
	if err := r.ParseForm(); err != nil {
		return badRequest("The form could not be read.")
	}
	if _, ok := httpapi.StorableValues(r.Form); !ok {
		return badRequest("The form holds characters that cannot be kept (a NUL, or bytes that are not UTF-8).")
	}
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" {
		return errCSRF
	}
	got := r.PostForm.Get(CSRFField)
	if got == "" || v.csrf == "" || subtle.ConstantTimeCompare([]byte(got), []byte(v.csrf)) != 1 {
		return errCSRF
	}
	return nil
}

// loadSession reads the live session with the cookie's id;
// store.ErrNotFound when there is none or it expired.
func (h *Handler) loadSession(ctx context.Context, id string) (*session, error) {
	s := &session{idHash: hashID(id)}
	err := h.DB.QueryRowContext(ctx, `
		SELECT s.user_id, a.login, s.state, s.csrf_token, s.expires_at
		FROM console_sessions s JOIN accounts a ON a.id = s.user_id
		WHERE s.id_hash = $1 AND s.expires_at > $2`, s.idHash, h.now().UTC()).Scan(
		&s.userID, &s.login, &s.state, &s.csrf, &s.expiresAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return s, nil
}

// startSession stores a new session of the user in the state, ending the
// visitor's previous one (a new id at every step: no session fixation),
// and sets its cookie.
func (h *Handler) startSession(w http.ResponseWriter, r *http.Request, v *visit, userID int64, state string) error {
	ttl := h.sessionTTL()
	if state == stateOTP {
		ttl = otpTTL
	}
	id, now := randomToken(), h.now().UTC()
	expires := now.Add(ttl).Truncate(time.Second)
	err := h.DB.Tx(r.Context(), func(tx *store.Tx) error {
		if v.session != nil {
			if _, err := tx.ExecContext(r.Context(), `DELETE FROM console_sessions WHERE id_hash = $1`, v.session.idHash); err != nil {
				return err
			}
		}
		// Expired sessions go as new ones come: the table holds live ones.
		if _, err := tx.ExecContext(r.Context(), `DELETE FROM console_sessions WHERE user_id = $1 AND expires_at <= $2`, userID, now); err != nil {
			return err
		}
		_, err := tx.ExecContext(r.Context(), `INSERT INTO console_sessions (id_hash, user_id, state, csrf_token, created_at, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6)`, hashID(id), userID, state, randomToken(), now, expires)
		return err
	})
	if err != nil {
		return store.Normalize(err)
	}
	var cookieExpiry time.Time
	if state == stateActive {
		cookieExpiry = expires
	}
	setCookie(w, r, SessionCookie, id, cookieExpiry)
	return nil
}

// endSession deletes the visitor's session and its cookie.
func (h *Handler) endSession(w http.ResponseWriter, r *http.Request, v *visit) error {
	if v.session != nil {
		if _, err := h.DB.ExecContext(r.Context(), `DELETE FROM console_sessions WHERE id_hash = $1`, v.session.idHash); err != nil {
			return store.Normalize(err)
		}
	}
	setCookie(w, r, SessionCookie, "", time.Time{})
	return nil
}

// EndSessions ends every console session of the user: a change of the
// user's password or two-factor setting calls it in the change's
// transaction, so that a browser signed in with the old credentials is
// signed out, as on the platform.
func EndSessions(ctx context.Context, q store.Q, userID int64) error {
	_, err := q.ExecContext(ctx, `DELETE FROM console_sessions WHERE user_id = $1`, userID)
	return store.Normalize(err)
}

// safeReturn returns raw when it is a path of this site (an absolute path
// with no scheme, host or backslash trick), else def: the pages never
// redirect elsewhere (no open redirects).
func safeReturn(raw, def string) string {
	if raw == "" || raw[0] != '/' || strings.HasPrefix(raw, "//") || strings.ContainsAny(raw, "\\\x00\r\n\t") {
		return def
	}
	u, err := url.Parse(raw)
	if err != nil || u.Scheme != "" || u.Host != "" || u.User != nil || u.Opaque != "" {
		return def
	}
	return raw
}

// requireUser returns the signed-in user, or redirects to the sign-in
// page (which comes back to this page) and returns nil.
func requireUser(w http.ResponseWriter, r *http.Request, v *visit) *session {
	if u := v.User(); u != nil {
		return u
	}
	back := r.URL.Path
	if r.Method == http.MethodGet && r.URL.RawQuery != "" {
		back += "?" + r.URL.RawQuery
	}
	if r.Method != http.MethodGet {
		back = SettingsPath
	}
	http.Redirect(w, r, LoginPath+"?"+url.Values{"return_to": {back}}.Encode(), http.StatusSeeOther)
	return nil
}

// Login is the signed-in user's login (for the pages).
func (s *session) Login() string { return s.login }
