package console

import (
	"errors"
	"net/http"
	"net/url"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
)

// loginPage is the sign-in form's data.
type loginPage struct {
	Login    string
	ReturnTo string
	Error    string
}

// loginForm serves GET /login: the password form, or, for a signed-in
// visitor, the redirect to return_to.
func (h *Handler) loginForm(w http.ResponseWriter, r *http.Request, v *visit) error {
	returnTo := safeReturn(r.URL.Query().Get("return_to"), SettingsPath)
	if v.User() != nil {
		return seeOther(w, r, returnTo)
	}
	h.render(w, r, v, http.StatusOK, "login", loginPage{Login: r.URL.Query().Get("login"), ReturnTo: returnTo})
	return nil
}

// signIn serves POST /session: the password step. A wrong password is
// the form again (401) and counts against the login limits; a blocked
// account is a 403 page; an account with two-factor authentication goes
// on to the one-time password.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request, v *visit) error {
	login, password := r.PostForm.Get("login"), r.PostForm.Get("password")
	returnTo := safeReturn(r.PostForm.Get("return_to"), SettingsPath)
	acct, needOTP, err := h.Authn.PasswordLogin(r.Context(), login, password, auth.ClientAddress(r))
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			h.render(w, r, v, http.StatusUnauthorized, "login", loginPage{Login: login, ReturnTo: returnTo,
				Error: "Incorrect username or password."})
			return nil
		}
		return err
	}
	if needOTP {
		if err := h.startSession(w, r, v, acct.ID, stateOTP); err != nil {
			return err
		}
		return seeOther(w, r, TwoFactorPath+"?"+url.Values{"return_to": {returnTo}}.Encode())
	}
	if err := h.startSession(w, r, v, acct.ID, stateActive); err != nil {
		return err
	}
	return seeOther(w, r, returnTo)
}

// twoFactorPage is the one-time password form's data.
type twoFactorPage struct {
	ReturnTo string
	Error    string
}

// twoFactorForm serves GET /sessions/two-factor, for a visitor whose
// password was accepted.
func (h *Handler) twoFactorForm(w http.ResponseWriter, r *http.Request, v *visit) error {
	returnTo := safeReturn(r.URL.Query().Get("return_to"), SettingsPath)
	if v.User() != nil {
		return seeOther(w, r, returnTo)
	}
	if v.session == nil {
		return seeOther(w, r, LoginPath)
	}
	h.render(w, r, v, http.StatusOK, "two-factor", twoFactorPage{ReturnTo: returnTo})
	return nil
}

// twoFactor serves POST /sessions/two-factor: a right code signs the
// user in (a new session id); a wrong one is the form again (401) and
// counts against the login limits.
func (h *Handler) twoFactor(w http.ResponseWriter, r *http.Request, v *visit) error {
	returnTo := safeReturn(r.PostForm.Get("return_to"), SettingsPath)
	if v.session == nil || v.session.state != stateOTP {
		return seeOther(w, r, LoginPath)
	}
	err := h.Authn.CompleteOTPLogin(r.Context(), v.session.userID, auth.ClientAddress(r), r.PostForm.Get("otp"))
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status == http.StatusUnauthorized {
			h.render(w, r, v, http.StatusUnauthorized, "two-factor", twoFactorPage{ReturnTo: returnTo,
				Error: "Two-factor authentication failed: " + ae.Message})
			return nil
		}
		return err
	}
	if err := h.startSession(w, r, v, v.session.userID, stateActive); err != nil {
		return err
	}
	return seeOther(w, r, returnTo)
}

// signOut serves POST /logout: the session ends here and on the server.
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request, v *visit) error {
	if err := h.endSession(w, r, v); err != nil {
		return err
	}
	return seeOther(w, r, LoginPath)
}
