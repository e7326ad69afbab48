package oauth

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// createRequest is the body of POST /authorizations.
type createRequest struct {
	Scopes       []string `json:"scopes"`
	Note         string   `json:"note"`
	NoteURL      string   `json:"note_url"`
	ClientID     string   `json:"client_id"`
	ClientSecret string   `json:"client_secret"`
	Fingerprint  string   `json:"fingerprint"`
}

// getOrCreateRequest is the body of the PUT /authorizations/clients/...
// endpoints; the second one takes the fingerprint from its path.
type getOrCreateRequest struct {
	ClientSecret *string  `json:"client_secret"`
	Scopes       []string `json:"scopes"`
	Note         string   `json:"note"`
	NoteURL      string   `json:"note_url"`
	Fingerprint  string   `json:"fingerprint"`
}

// updateRequest is the body of PATCH /authorizations/{authorization_id}.
type updateRequest struct {
	Scopes       presentScopes `json:"scopes"`
	AddScopes    presentScopes `json:"add_scopes"`
	RemoveScopes presentScopes `json:"remove_scopes"`
	Note         *string       `json:"note"`
	NoteURL      *string       `json:"note_url"`
	Fingerprint  *string       `json:"fingerprint"`
}

// presentScopes is a scope list that remembers whether its key was sent
// (null included), to refuse more than one scope key in an update.
type presentScopes struct {
	Present bool
	Values  []string
}

// UnmarshalJSON reads a scope array or null.
func (p *presentScopes) UnmarshalJSON(b []byte) error {
	p.Present = true
	return json.Unmarshal(b, &p.Values)
}

// The length limits of an authorization's text fields, in characters.
const (
	MaxNoteLength        = 1000
	MaxNoteURLLength     = 2048
	MaxFingerprintLength = 255
)

// checkLengths adds a field error for each text field over its limit;
// nil fields were not sent.
func checkLengths(f *apierr.Fields, note, noteURL, fingerprint *string) {
	for _, p := range []struct {
		field string
		value *string
		max   int
	}{
		{"note", note, MaxNoteLength},
		{"note_url", noteURL, MaxNoteURLLength},
		{"fingerprint", fingerprint, MaxFingerprintLength},
	} {
		if p.value != nil {
			f.MaxLength(resource, p.field, *p.value, p.max)
		}
	}
}

// validateScopes adds a field error for each name that is not a scope.
func validateScopes(f *apierr.Fields, field string, scopes []string) auth.Scopes {
	for _, s := range scopes {
		if !auth.ValidScope(s) {
			*f = append(*f, apierr.FieldError{Resource: resource, Field: field, Code: apierr.CodeInvalid, Value: s,
				Message: "'" + s + "' is not a valid scope."})
		}
	}
	return auth.Scopes(scopes).Normalize()
}

// resolveApp finds the application of a client id and checks its secret,
// adding field errors for what is wrong; the app is nil when any is.
func (h *Handler) resolveApp(ctx context.Context, f *apierr.Fields, clientID string, secret *string) (*accounts.App, error) {
	app, err := appByClientID(ctx, h.Service.DB, clientID)
	if errors.Is(err, store.ErrNotFound) {
		*f = append(*f, apierr.FieldError{Resource: resource, Field: "client_id", Code: apierr.CodeInvalid,
			Message: "client_id must be the 20-character client id of an existing OAuth application."})
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	if secret == nil || *secret == "" {
		f.Add(resource, "client_secret", apierr.CodeMissingField)
		return nil, nil
	}
	ok, err := accounts.CheckAppSecret(ctx, h.Service.DB, app.ID, *secret)
	if err != nil {
		return nil, err
	}
	if !ok {
		*f = append(*f, apierr.FieldError{Resource: resource, Field: "client_secret", Code: apierr.CodeInvalid,
			Message: "client_secret does not match the application's secret."})
		return nil, nil
	}
	return app, nil
}

func (h *Handler) gone(w http.ResponseWriter, r *http.Request) error {
	return apierr.Gone("The authorizations API has been removed from this server. Use the OAuth web application flow to get tokens.")
}

func (h *Handler) listAuthorizations(w http.ResponseWriter, r *http.Request) error {
	page, f, err := listFilter(r)
	if err != nil {
		return err
	}
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	list, total, err := h.Service.ListAuthorizations(r.Context(), user.ID, f)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]authorizationJSON, 0, len(list))
	for _, z := range list {
		out = append(out, toAuthorizationJSON(base, z, user))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) createAuthorization(w http.ResponseWriter, r *http.Request) error {
	var body createRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	n := NewAuthorization{Scopes: validateScopes(&f, "scopes", body.Scopes), Note: body.Note,
		NoteURL: body.NoteURL, Fingerprint: body.Fingerprint}
	checkLengths(&f, &n.Note, &n.NoteURL, &n.Fingerprint)
	switch {
	case body.ClientID != "":
		app, err := h.resolveApp(r.Context(), &f, body.ClientID, &body.ClientSecret)
		if err != nil {
			return err
		}
		n.App = app
	case body.ClientSecret != "":
		f.Add(resource, "client_id", apierr.CodeMissingField)
	case body.Note == "":
		// Without an application the note names the authorization.
		f = append(f, apierr.FieldError{Resource: resource, Field: "note", Code: apierr.CodeMissingField,
			Message: "A note is required for a personal authorization (one without client_id)."})
	}
	if err := f.Err(); err != nil {
		return err
	}
	z, err := h.Service.Create(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), n)
	if err != nil {
		return err
	}
	return h.writeAuthorization(w, r, http.StatusCreated, z)
}

func (h *Handler) getOrCreateForApp(w http.ResponseWriter, r *http.Request) error {
	return h.getOrCreate(w, r, nil)
}

func (h *Handler) getOrCreateForFingerprint(w http.ResponseWriter, r *http.Request) error {
	fp := r.PathValue("fingerprint")
	return h.getOrCreate(w, r, &fp)
}

// getOrCreate serves both PUT endpoints; pathFingerprint is nil for the
// one that takes the fingerprint from the body.
func (h *Handler) getOrCreate(w http.ResponseWriter, r *http.Request, pathFingerprint *string) error {
	var body getOrCreateRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	n := NewAuthorization{Scopes: validateScopes(&f, "scopes", body.Scopes), Note: body.Note,
		NoteURL: body.NoteURL, Fingerprint: body.Fingerprint}
	if pathFingerprint != nil {
		n.Fingerprint = *pathFingerprint
	}
	checkLengths(&f, &n.Note, &n.NoteURL, &n.Fingerprint)
	app, err := h.resolveApp(r.Context(), &f, r.PathValue("client_id"), body.ClientSecret)
	if err != nil {
		return err
	}
	if err := f.Err(); err != nil {
		return err
	}
	n.App = app
	z, created, err := h.Service.GetOrCreate(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), n)
	if err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	return h.writeAuthorization(w, r, status, z)
}

func (h *Handler) getAuthorization(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "authorization_id")
	if err != nil {
		return err
	}
	z, err := h.Service.GetAuthorization(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), id)
	if err != nil {
		return err
	}
	return h.writeAuthorization(w, r, http.StatusOK, z)
}

func (h *Handler) updateAuthorization(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "authorization_id")
	if err != nil {
		return err
	}
	var body updateRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	u, err := body.toUpdate()
	if err != nil {
		return err
	}
	z, err := h.Service.UpdateAuthorization(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), id, u)
	if err != nil {
		return err
	}
	return h.writeAuthorization(w, r, http.StatusOK, z)
}

// toUpdate validates the body: at most one scope key, known scope names.
func (b updateRequest) toUpdate() (Update, error) {
	u := Update{Note: b.Note, NoteURL: b.NoteURL, Fingerprint: b.Fingerprint}
	var f apierr.Fields
	checkLengths(&f, b.Note, b.NoteURL, b.Fingerprint)
	sent := 0
	for _, k := range []struct {
		name string
		p    presentScopes
		set  func(auth.Scopes)
	}{
		{"scopes", b.Scopes, func(s auth.Scopes) { u.Scopes = &s }},
		{"add_scopes", b.AddScopes, func(s auth.Scopes) { u.AddScopes = s }},
		{"remove_scopes", b.RemoveScopes, func(s auth.Scopes) { u.RemoveScopes = s }},
	} {
		if !k.p.Present {
			continue
		}
		sent++
		s := validateScopes(&f, k.name, k.p.Values)
		if s == nil {
			s = auth.Scopes{}
		}
		k.set(s)
	}
	if sent > 1 {
		return u, apierr.Validation(apierr.FieldError{Resource: resource, Field: "scopes", Code: apierr.CodeInvalid,
			Message: "Only one of scopes, add_scopes and remove_scopes may be sent at a time."})
	}
	return u, f.Err()
}

func (h *Handler) deleteAuthorization(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "authorization_id")
	if err != nil {
		return err
	}
	if err := h.Service.DeleteAuthorization(r.Context(), auth.PrincipalFrom(r.Context()).UserID(), id); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// writeAuthorization writes one authorization; a 201 also gets Location.
func (h *Handler) writeAuthorization(w http.ResponseWriter, r *http.Request, status int, z *Authorization) error {
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	body := toSingleAuthorizationJSON(httpapi.BaseURL(r.Context()), z, user)
	if status == http.StatusCreated {
		w.Header().Set("Location", body.URL)
	}
	httpapi.WriteJSON(w, status, body)
	return nil
}
