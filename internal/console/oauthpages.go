package console

import (
	"errors"
	"net/http"
	"net/url"

	"forgeapi/internal/apierr"
	"forgeapi/internal/oauthweb"
)

// consentPage is the consent page's data: what the application asks and
// the request the form carries on.
type consentPage struct {
	Consent *oauthweb.Consent
	Fields  url.Values
}

// flowError renders what the authorize flow's service refused: an
// *oauthweb.ErrorPage as a page with its status, an
// *oauthweb.ErrorRedirect as the redirect to the application.
func flowError(w http.ResponseWriter, r *http.Request, err error) error {
	var page *oauthweb.ErrorPage
	var redirect *oauthweb.ErrorRedirect
	switch {
	case errors.As(err, &redirect):
		http.Redirect(w, r, redirect.URL, http.StatusFound)
		return nil
	case errors.As(err, &page):
		status := page.Status
		if status < 400 || status > 499 {
			status = http.StatusBadRequest
		}
		return &pageError{Status: status, Title: "Application error (" + page.Code + ")", Message: page.Message}
	}
	return err
}

// authorizeForm serves GET /login/oauth/authorize: sign-in first (coming
// back here), then the consent page, or at once the redirect to the
// application when the user's grant already covers what it asks.
func (h *Handler) authorizeForm(w http.ResponseWriter, r *http.Request, v *visit) error {
	req := oauthweb.AuthorizeRequestFrom(r.URL.Query())
	if v.User() == nil {
		q := url.Values{"return_to": {r.URL.Path + "?" + r.URL.RawQuery}}
		if req.Login != "" {
			q.Set("login", req.Login)
		}
		return seeOther(w, r, LoginPath+"?"+q.Encode())
	}
	consent, err := h.OAuthWeb.Check(r.Context(), v.User().userID, req)
	if err != nil {
		return flowError(w, r, err)
	}
	if consent.AlreadyGranted {
		to, err := h.OAuthWeb.Approve(r.Context(), v.User().userID, req)
		if err != nil {
			return flowError(w, r, err)
		}
		http.Redirect(w, r, to, http.StatusFound)
		return nil
	}
	h.render(w, r, v, http.StatusOK, "consent", consentPage{Consent: consent, Fields: req.Values()})
	return nil
}

// authorize serves POST /login/oauth/authorize, the consent form's
// Authorize (authorize=1) or Cancel button: the redirect to the
// application with the code, or with error=access_denied.
func (h *Handler) authorize(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	req := oauthweb.AuthorizeRequestFrom(r.PostForm)
	var to string
	var err error
	if r.PostForm.Get("authorize") == "1" {
		to, err = h.OAuthWeb.Approve(r.Context(), u.userID, req)
	} else {
		to, err = h.OAuthWeb.Deny(r.Context(), req)
	}
	if err != nil {
		return flowError(w, r, err)
	}
	http.Redirect(w, r, to, http.StatusFound)
	return nil
}

// devicePage is the code entry form's data.
type devicePage struct {
	UserCode string
	Error    string
}

// deviceConfirmPage shows a pending device request before the decision.
type deviceConfirmPage struct {
	Device *oauthweb.DeviceRequest
}

// deviceDonePage says how the decision went.
type deviceDonePage struct {
	Approved bool
	AppName  string
}

// deviceForm serves GET /login/device: the user code form (user_code in
// the query fills it in), for a signed-in user.
func (h *Handler) deviceForm(w http.ResponseWriter, r *http.Request, v *visit) error {
	if requireUser(w, r, v) == nil {
		return nil
	}
	h.render(w, r, v, http.StatusOK, "device", devicePage{UserCode: r.URL.Query().Get("user_code")})
	return nil
}

// deviceLookup serves POST /login/device: an unknown or expired code is
// the form again (404); a pending one is shown for approval.
func (h *Handler) deviceLookup(w http.ResponseWriter, r *http.Request, v *visit) error {
	if requireUser(w, r, v) == nil {
		return nil
	}
	code := r.PostForm.Get("user_code")
	d, err := h.OAuthWeb.LookupDevice(r.Context(), code)
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status < 500 {
			h.render(w, r, v, ae.Status, "device", devicePage{UserCode: code, Error: ae.Message})
			return nil
		}
		return err
	}
	h.render(w, r, v, http.StatusOK, "device-confirm", deviceConfirmPage{Device: d})
	return nil
}

// deviceDecide serves POST /login/device/confirm, the Authorize
// (authorize=1) or Cancel button of a device request.
func (h *Handler) deviceDecide(w http.ResponseWriter, r *http.Request, v *visit) error {
	u := requireUser(w, r, v)
	if u == nil {
		return nil
	}
	code := r.PostForm.Get("user_code")
	d, err := h.OAuthWeb.LookupDevice(r.Context(), code)
	if err != nil {
		var ae *apierr.Error
		if errors.As(err, &ae) && ae.Status < 500 {
			h.render(w, r, v, ae.Status, "device", devicePage{UserCode: code, Error: ae.Message})
			return nil
		}
		return err
	}
	approve := r.PostForm.Get("authorize") == "1"
	if approve {
		err = h.OAuthWeb.ApproveDevice(r.Context(), u.userID, code)
	} else {
		err = h.OAuthWeb.DenyDevice(r.Context(), u.userID, code)
	}
	if err != nil {
		return err
	}
	h.render(w, r, v, http.StatusOK, "device-done", deviceDonePage{Approved: approve, AppName: d.AppName})
	return nil
}
