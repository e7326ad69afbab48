// Package graphql answers the platform's GraphQL endpoint
// (POST /api/graphql) for the one query that clients of the REST API make
// before anything else: the viewer's login (the gh CLI's
// `query UserCurrent{viewer{login}}`, run by `gh auth status`). Every
// other query is answered with a GraphQL error that says forgeapi serves
// the REST API; the HTTP status stays 200, as GraphQL servers answer.
package graphql

import (
	"net/http"
	"unicode"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// Handler serves the GraphQL endpoint.
type Handler struct {
	DB *store.DB
}

// Routes is the GraphQL route table: any credentials (the viewer is
// whom they authenticate), 401 without.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "POST", Pattern: "/api/graphql", Handle: h.query,
			Auth: auth.Rule{Unauthorized401: true, TokenTypes: auth.AllTokenTypes}},
	}
}

// request is a GraphQL request body.
type request struct {
	Query string `json:"query"`
}

// gqlError is one entry of a GraphQL response's errors.
type gqlError struct {
	Message string `json:"message"`
}

// viewerFields are the fields of the viewer that forgeapi answers.
var viewerFields = map[string]func(base string, a *accounts.Account) any{
	"login":      func(_ string, a *accounts.Account) any { return a.Login },
	"name":       func(_ string, a *accounts.Account) any { return a.Name },
	"databaseId": func(_ string, a *accounts.Account) any { return a.ID },
	"id":         func(_ string, a *accounts.Account) any { return accounts.NodeID(a) },
	"url":        func(base string, a *accounts.Account) any { return accounts.HTMLURL(base, a) },
}

func (h *Handler) query(w http.ResponseWriter, r *http.Request) error {
	var body request
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	fields, ok := viewerQuery(body.Query)
	if !ok {
		httpapi.WriteJSON(w, http.StatusOK, map[string]any{"errors": []gqlError{{
			Message: "forgeapi serves the REST API; of GraphQL it answers only the viewer's login, name, databaseId, id and url.",
		}}})
		return nil
	}
	viewer, err := accounts.ByID(r.Context(), h.DB, auth.PrincipalFrom(r.Context()).UserID())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := map[string]any{}
	for _, f := range fields {
		out[f] = viewerFields[f](base, viewer)
	}
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"data": map[string]any{"viewer": out}})
	return nil
}

// viewerQuery parses a query of the form
// `[query [Name]] { viewer { field ... } }` and returns its fields; false
// for anything else (other roots, arguments, fragments, unknown fields).
func viewerQuery(q string) ([]string, bool) {
	toks := tokens(q)
	if len(toks) > 0 && toks[0] == "query" {
		toks = toks[1:]
		if len(toks) > 0 && toks[0] != "{" {
			toks = toks[1:] // the operation's name
		}
	}
	if len(toks) < 5 || toks[0] != "{" || toks[1] != "viewer" || toks[2] != "{" ||
		toks[len(toks)-1] != "}" || toks[len(toks)-2] != "}" {
		return nil, false
	}
	fields := toks[3 : len(toks)-2]
	if len(fields) == 0 {
		return nil, false
	}
	for _, f := range fields {
		if viewerFields[f] == nil {
			return nil, false
		}
	}
	return fields, true
}

// tokens splits a query into names and punctuation, dropping commas,
// white space and comments; any other character is its own token.
func tokens(q string) []string {
	var out []string
	for i := 0; i < len(q); {
		c := rune(q[i])
		switch {
		case c == '#':
			for i < len(q) && q[i] != '\n' {
				i++
			}
		case c == ',' || unicode.IsSpace(c):
			i++
		case c == '_' || unicode.IsLetter(c) || unicode.IsDigit(c):
			j := i
			for j < len(q) && (q[j] == '_' || unicode.IsLetter(rune(q[j])) || unicode.IsDigit(rune(q[j]))) {
				j++
			}
			out = append(out, q[i:j])
			i = j
		default:
			out = append(out, string(c))
			i++
		}
	}
	return out
}
