// Package dispatches serves repository dispatch: POST
// /repos/{owner}/{repo}/dispatches, which sends the repository_dispatch
// webhook event of a custom event type with the caller's client payload
// to the repository's hooks, its organization's and the apps subscribed
// to it, as an integration triggers a workflow or a deployment from
// outside.
package dispatches

import (
	"bytes"
	"encoding/json"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// The platform's limits of a dispatch: the event type's length in
// characters, the client payload's top-level properties and its encoded
// size in bytes.
const (
	MaxEventTypeLength = 100
	MaxPayloadKeys     = 10
	MaxPayloadSize     = 64 << 10
)

// Handler serves repository dispatch.
type Handler struct {
	DB     *store.DB
	Events *events.Bus
}

// Routes is the dispatch route table: push access (classic and OAuth
// tokens: repo, or public_repo on a public repository; fine-grained and
// app tokens: Contents write), as on the platform.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "POST", Pattern: "/repos/{owner}/{repo}/dispatches", Handle: h.dispatch,
			Auth: auth.Rule{Target: auth.TargetRepo, Role: auth.RoleWrite, Permissions: auth.Perm("contents:write"),
				TokenTypes: auth.AllTokenTypes}},
	}
}

// dispatchRequest is the body of POST .../dispatches.
type dispatchRequest struct {
	EventType     *string         `json:"event_type"`
	ClientPayload json.RawMessage `json:"client_payload"`
}

// dispatch answers POST /repos/{owner}/{repo}/dispatches: 204 once the
// repository_dispatch event is emitted (its deliveries are written in the
// same transaction); 422 for a missing or too long event_type and a
// client_payload that is not an object, has more than MaxPayloadKeys
// top-level properties or MaxPayloadSize bytes.
func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request) error {
	var body dispatchRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	payload, err := body.validate()
	if err != nil {
		return err
	}
	ctx := r.Context()
	principal := auth.PrincipalFrom(ctx)
	actor, err := accounts.ByID(ctx, h.DB, principal.UserID())
	if err != nil {
		return err
	}
	repo := repos.From(ctx)
	hook := map[string]any{"action": *body.EventType, "branch": repo.DefaultBranch, "client_payload": payload}
	if t := principal.Token; t != nil && t.Kind == auth.KindInstallation && t.InstallationID != 0 {
		hook["installation"] = map[string]any{"id": t.InstallationID, "node_id": wire.NodeID("IN", t.InstallationID)}
	}
	err = h.DB.Tx(ctx, func(tx *store.Tx) error {
		return h.Events.Emit(ctx, tx, &events.Event{HookEvent: "repository_dispatch", HookPayload: hook,
			Actor: actor, Repo: repo, Public: !repo.Private})
	})
	if err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// validate checks the body and returns the client payload (an empty
// object when none was given).
func (b dispatchRequest) validate() (map[string]json.RawMessage, error) {
	var f apierr.Fields
	switch {
	case b.EventType == nil || *b.EventType == "":
		f.Add("RepositoryDispatch", "event_type", apierr.CodeMissingField)
	default:
		f.MaxLength("RepositoryDispatch", "event_type", *b.EventType, MaxEventTypeLength)
	}
	payload := map[string]json.RawMessage{}
	raw := bytes.TrimSpace(b.ClientPayload)
	switch {
	case len(raw) == 0 || bytes.Equal(raw, []byte("null")):
	case raw[0] != '{' || json.Unmarshal(raw, &payload) != nil:
		f.Addf("RepositoryDispatch", "client_payload", "client_payload must be an object")
	case len(payload) > MaxPayloadKeys:
		f.Addf("RepositoryDispatch", "client_payload", "client_payload can have at most %d top-level properties", MaxPayloadKeys)
	case len(raw) >= MaxPayloadSize:
		f.Addf("RepositoryDispatch", "client_payload", "client_payload must be less than %d KB", MaxPayloadSize>>10)
	}
	return payload, f.Err()
}
