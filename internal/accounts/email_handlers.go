package accounts

import (
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// emailJSON is the platform's email object.
type emailJSON struct {
	Email      string  `json:"email"`
	Primary    bool    `json:"primary"`
	Verified   bool    `json:"verified"`
	Visibility *string `json:"visibility"`
}

// writeEmails answers the user's addresses (publicOnly: the public
// primary one only) with status.
func (h *Handler) writeEmails(w http.ResponseWriter, r *http.Request, status int, publicOnly bool) error {
	list, err := Emails(r.Context(), h.DB, auth.PrincipalFrom(r.Context()).UserID(), publicOnly)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	shown := httpapi.Slice(page, list)
	out := make([]emailJSON, 0, len(shown))
	for _, e := range shown {
		out = append(out, emailJSON{Email: e.Address, Primary: e.Primary, Verified: true, Visibility: visibilityOf(e)})
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, status, out)
	return nil
}

func (h *Handler) listEmails(w http.ResponseWriter, r *http.Request) error {
	return h.writeEmails(w, r, http.StatusOK, false)
}

func (h *Handler) listPublicEmails(w http.ResponseWriter, r *http.Request) error {
	return h.writeEmails(w, r, http.StatusOK, true)
}

// emailsBody reads the addresses of POST and DELETE /user/emails: an
// object {"emails": [...]}, an array of addresses or one address, as the
// platform accepts. None, or one that is not an address, is a 422; an
// address over MaxEmailLength characters is the 422 of apierr.TooLong
// (field "email"), which states the limit.
func emailsBody(r *http.Request) ([]string, error) {
	var raw json.RawMessage
	if err := httpapi.DecodeJSON(r, &raw); err != nil {
		return nil, err
	}
	var obj struct {
		Emails []string `json:"emails"`
	}
	var list []string
	var one string
	switch {
	case json.Unmarshal(raw, &obj) == nil && obj.Emails != nil:
		list = obj.Emails
	case json.Unmarshal(raw, &list) == nil:
	case json.Unmarshal(raw, &one) == nil:
		list = []string{one}
	}
	if len(list) == 0 {
		return nil, apierr.Invalid("UserEmail", "emails", apierr.CodeMissingField)
	}
	var f apierr.Fields
	for _, e := range list {
		switch {
		case apierr.TooLongFor(e, MaxEmailLength):
			f = append(f, apierr.TooLong("UserEmail", "email", MaxEmailLength))
		case !ValidEmail(e):
			f = append(f, apierr.FieldError{Resource: "UserEmail", Field: "email", Code: apierr.CodeInvalid, Value: e,
				Message: e + " is not a valid email address."})
		}
	}
	return list, f.Err()
}

func (h *Handler) addEmails(w http.ResponseWriter, r *http.Request) error {
	list, err := emailsBody(r)
	if err != nil {
		return err
	}
	id := auth.PrincipalFrom(r.Context()).UserID()
	if err := h.DB.Tx(r.Context(), func(tx *store.Tx) error { return AddEmails(r.Context(), tx, id, list) }); err != nil {
		return err
	}
	added, err := Emails(r.Context(), h.DB, id, false)
	if err != nil {
		return err
	}
	out := []emailJSON{}
	for _, e := range added {
		for _, a := range list {
			if strings.EqualFold(e.Address, a) {
				out = append(out, emailJSON{Email: e.Address, Primary: e.Primary, Verified: true, Visibility: visibilityOf(e)})
				break
			}
		}
	}
	httpapi.WriteJSON(w, http.StatusCreated, out)
	return nil
}

func visibilityOf(e Email) *string {
	if !e.Primary {
		return nil
	}
	return &e.Visibility
}

func (h *Handler) deleteEmails(w http.ResponseWriter, r *http.Request) error {
	list, err := emailsBody(r)
	if err != nil {
		return err
	}
	id := auth.PrincipalFrom(r.Context()).UserID()
	if err := h.DB.Tx(r.Context(), func(tx *store.Tx) error { return DeleteEmails(r.Context(), tx, id, list) }); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// setEmailVisibility answers PATCH /user/email/visibility: the primary
// address becomes public or private; the answer lists the addresses.
func (h *Handler) setEmailVisibility(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Visibility *string `json:"visibility"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	switch {
	case body.Visibility == nil:
		return apierr.Invalid("UserEmail", "visibility", apierr.CodeMissingField)
	case *body.Visibility != EmailPublic && *body.Visibility != EmailPrivate:
		return apierr.Invalid("UserEmail", "visibility", apierr.CodeInvalid)
	}
	err := SetPrimaryEmailVisibility(r.Context(), h.DB, auth.PrincipalFrom(r.Context()).UserID(), *body.Visibility)
	if errors.Is(err, store.ErrNotFound) {
		return apierr.NotFound()
	}
	if err != nil {
		return err
	}
	return h.writeEmails(w, r, http.StatusOK, false)
}
