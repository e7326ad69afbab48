package oauthweb

import (
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"forgeapi/internal/httpapi"
)

// maxBody is the largest body the endpoints read.
const maxBody = 64 << 10

// accessToken serves POST /login/oauth/access_token.
func (h *Handler) accessToken(w http.ResponseWriter, r *http.Request) {
	v, err := readParams(w, r)
	if err != nil {
		writeResult(w, r, tokenError(r.Context(), "bad_request", "The request body could not be read."))
		return
	}
	req := TokenRequest{GrantType: v.Get("grant_type"), ClientID: v.Get("client_id"), ClientSecret: v.Get("client_secret"),
		Code: v.Get("code"), RedirectURI: v.Get("redirect_uri"), CodeVerifier: v.Get("code_verifier"),
		RefreshToken: v.Get("refresh_token"), DeviceCode: v.Get("device_code")}
	if id, secret, ok := r.BasicAuth(); ok && req.ClientID == "" || ok && req.ClientID == id && req.ClientSecret == "" {
		req.ClientID, req.ClientSecret = id, secret
	}
	t, err := h.Service.Exchange(r.Context(), req)
	if err != nil {
		writeResult(w, r, h.failure(r, err))
		return
	}
	out := url.Values{"access_token": {t.AccessToken}, "token_type": {t.TokenType}, "scope": {strings.Join(t.Scopes, ",")}}
	if t.RefreshToken != "" {
		out.Set("expires_in", strconv.FormatInt(t.ExpiresIn, 10))
		out.Set("refresh_token", t.RefreshToken)
		out.Set("refresh_token_expires_in", strconv.FormatInt(t.RefreshTokenExpiresIn, 10))
	}
	writeValues(w, r, out)
}

// deviceCode serves POST /login/device/code.
func (h *Handler) deviceCode(w http.ResponseWriter, r *http.Request) {
	v, err := readParams(w, r)
	if err != nil {
		writeResult(w, r, tokenError(r.Context(), "bad_request", "The request body could not be read."))
		return
	}
	verify := httpapi.WebBase(httpapi.BaseURL(r.Context())) + "/login/device"
	d, err := h.Service.StartDevice(r.Context(), v.Get("client_id"), v.Get("scope"), verify)
	if err != nil {
		writeResult(w, r, h.failure(r, err))
		return
	}
	writeValues(w, r, url.Values{"device_code": {d.DeviceCode}, "user_code": {d.UserCode},
		"verification_uri": {d.VerificationURI}, "expires_in": {strconv.FormatInt(d.ExpiresIn, 10)},
		"interval": {strconv.FormatInt(d.Interval, 10)}})
}

// failure returns the TokenError of err, logging an internal error and
// answering it without its details.
func (h *Handler) failure(r *http.Request, err error) *TokenError {
	var te *TokenError
	if errors.As(err, &te) {
		return te
	}
	slog.ErrorContext(r.Context(), "oauth web flow", "path", r.URL.Path, "err", err)
	return &TokenError{Code: "server_error", Description: "The server could not answer the request; try again."}
}

// readParams reads the parameters of a form or JSON body (JSON strings
// and numbers), with the query's.
func readParams(w http.ResponseWriter, r *http.Request) (url.Values, error) {
	r.Body = http.MaxBytesReader(w, r.Body, maxBody)
	mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if mt != "application/json" {
		if err := r.ParseForm(); err != nil {
			return nil, err
		}
		return r.Form, storable(r.Form)
	}
	v := r.URL.Query()
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		return nil, err
	}
	for k, x := range body {
		switch x := x.(type) {
		case string:
			v.Set(k, x)
		case float64:
			v.Set(k, strconv.FormatFloat(x, 'f', -1, 64))
		}
	}
	return v, storable(v)
}

// storable refuses parameters no store can keep (a NUL character, bytes
// that are not UTF-8).
func storable(v url.Values) error {
	if name, ok := httpapi.StorableValues(v); !ok {
		return fmt.Errorf("parameter %q is not UTF-8 text without NUL characters", name)
	}
	return nil
}

// wantsJSON reports whether the client asked for JSON (Accept:
// application/json); the platform answers form-encoded otherwise.
func wantsJSON(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		mt, _, _ := mime.ParseMediaType(strings.TrimSpace(part))
		if mt == "application/json" || strings.HasSuffix(mt, "+json") {
			return true
		}
	}
	return false
}

// writeResult writes a TokenError as the platform does: HTTP 200 with
// error, error_description, error_uri (and interval for slow_down).
func writeResult(w http.ResponseWriter, r *http.Request, e *TokenError) {
	v := url.Values{"error": {e.Code}, "error_description": {e.Description}}
	if e.URI != "" {
		v.Set("error_uri", e.URI)
	}
	if e.Interval > 0 {
		v.Set("interval", strconv.FormatInt(e.Interval, 10))
	}
	writeValues(w, r, v)
}

// numeric are the fields that JSON answers carry as numbers.
var numeric = map[string]bool{"expires_in": true, "refresh_token_expires_in": true, "interval": true}

// writeValues answers v as JSON or form-encoded, with Cache-Control:
// no-store (tokens must not be cached).
func writeValues(w http.ResponseWriter, r *http.Request, v url.Values) {
	w.Header().Set("Cache-Control", "no-store")
	if !wantsJSON(r) {
		w.Header().Set("Content-Type", "application/x-www-form-urlencoded; charset=utf-8")
		_, _ = w.Write([]byte(v.Encode()))
		return
	}
	out := map[string]any{}
	for k := range v {
		out[k] = v.Get(k)
		if n, err := strconv.ParseInt(v.Get(k), 10, 64); err == nil && numeric[k] {
			out[k] = n
		}
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	_ = json.NewEncoder(w).Encode(out)
}
