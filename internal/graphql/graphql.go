// Package graphql answers the platform's GraphQL endpoint
// (POST /api/graphql) for the few operations that clients of the REST API
// make through it: the viewer (the gh CLI's
// `query UserCurrent{viewer{login}}`, run by `gh auth status`), a pull
// request by number (`repository(owner,name){pullRequest(number){...}}`,
// which `gh pr ready` runs first) and the draft mutations the REST API
// lacks, markPullRequestReadyForReview and convertPullRequestToDraft
// (`gh pr ready [--undo]`). Arguments are literals or `$variables` of the
// request's variables. Every other query is answered with a GraphQL error
// that says forgeapi serves the REST API; the HTTP status stays 200, as
// GraphQL servers answer, and so do the errors of a field (NOT_FOUND,
// FORBIDDEN), reported in errors[] with the field's path and null in
// data.
package graphql

import (
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/pulls"
	"forgeapi/internal/store"
)

// Handler serves the GraphQL endpoint.
type Handler struct {
	DB    *store.DB
	Pulls *pulls.Service
}

// Routes is the GraphQL route table: any credentials (the viewer is
// whom they authenticate), 401 without. What a caller may read or change
// is checked per field, as the REST routes check it: a pull request is
// read with read access to its repository (fine-grained tokens: Pull
// requests read on a private one), and marked draft or ready by its
// author or with push access (classic tokens: repo or public_repo;
// fine-grained: Pull requests write on a selected repository).
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "POST", Pattern: "/api/graphql", Handle: h.query,
			Auth: auth.Rule{Unauthorized401: true, TokenTypes: auth.AllTokenTypes}},
	}
}

// request is a GraphQL request body.
type request struct {
	Query     string    `json:"query"`
	Variables variables `json:"variables"`
}

// gqlError is one entry of a GraphQL response's errors.
type gqlError struct {
	Type    string `json:"type,omitempty"`
	Path    []any  `json:"path,omitempty"`
	Message string `json:"message"`
}

// unsupported is the error of every operation forgeapi does not answer.
var unsupported = "forgeapi serves the REST API; of GraphQL it answers only the viewer's login, name, databaseId, id and url, " +
	"repository(owner, name) { pullRequest(number) } and the mutations markPullRequestReadyForReview and convertPullRequestToDraft " +
	"(pull request fields: " + strings.Join(sortedKeys(pullFields), ", ") + ")."

func (h *Handler) query(w http.ResponseWriter, r *http.Request) error {
	var body request
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	op, err := parse(body.Query)
	if err == nil && !op.valid() {
		err = errSyntax
	}
	if err != nil {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"errors": []gqlError{{Message: unsupported}}})
		return nil
	}
	ex := &executor{h: h, ctx: r.Context(), principal: auth.PrincipalFrom(r.Context()), base: httpapi.BaseURL(r.Context()), vars: body.Variables}
	data, err := ex.run(op)
	if err != nil {
		return err
	}
	out := map[string]any{"data": data}
	if len(ex.errs) > 0 {
		out["errors"] = ex.errs
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// viewerFields are the fields of the viewer that forgeapi answers.
var viewerFields = map[string]func(base string, a *accounts.Account) any{
	"login":      func(_ string, a *accounts.Account) any { return a.Login },
	"name":       func(_ string, a *accounts.Account) any { return a.Name },
	"databaseId": func(_ string, a *accounts.Account) any { return a.ID },
	"id":         func(_ string, a *accounts.Account) any { return accounts.NodeID(a) },
	"url":        func(base string, a *accounts.Account) any { return accounts.HTMLURL(base, a) },
}

// object is a type of the schema forgeapi answers: its fields, each nil
// for a scalar or the object it selects.
type object map[string]*object

var (
	viewerType      = object{"login": nil, "name": nil, "databaseId": nil, "id": nil, "url": nil}
	pullRequestType = object{}
	repositoryType  = object{"pullRequest": &pullRequestType}
	payloadType     = object{"pullRequest": &pullRequestType, "clientMutationId": nil}
	queryType       = object{"viewer": &viewerType, "repository": &repositoryType}
	mutationType    = object{"markPullRequestReadyForReview": &payloadType, "convertPullRequestToDraft": &payloadType}
)

func init() {
	for name := range pullFields {
		pullRequestType[name] = nil
	}
}

// valid reports whether every selected field is one forgeapi answers,
// scalars without and objects with a selection.
func (op *operation) valid() bool {
	root := queryType
	if op.kind == "mutation" {
		root = mutationType
	}
	return validSelection(op.fields, root)
}

func validSelection(fields []field, typ object) bool {
	for _, f := range fields {
		child, ok := typ[f.name]
		if !ok || (child == nil) != (f.sel == nil) || child != nil && !validSelection(f.sel, *child) {
			return false
		}
	}
	return true
}

// sortedKeys lists a map's keys in order.
func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
