// Package api serves the Markdown API: POST /markdown (a JSON body, in
// markdown or gfm mode, with a repository as the context of #123
// references) and POST /markdown/raw (the body is the text), both
// answered as text/html by the one renderer, package markdown.
package api

import (
	"context"
	"errors"
	"io"
	"net/http"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/markdown"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Handler serves the Markdown API.
type Handler struct {
	DB *store.DB
}

// maxText is the longest text rendered, as the platform's 400 KB.
const maxText = 400 << 10

// Routes is the Markdown route table. It reads no field of h.
func (h *Handler) Routes() []httpapi.Route {
	public := auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "POST", Pattern: "/markdown", Handle: h.render, Auth: public},
		{Method: "POST", Pattern: "/markdown/raw", Handle: h.renderRaw, Auth: public},
	}
}

// renderRequest is the body of POST /markdown.
type renderRequest struct {
	Text    *string `json:"text"`
	Mode    string  `json:"mode"`
	Context string  `json:"context"`
}

func (h *Handler) render(w http.ResponseWriter, r *http.Request) error {
	var b renderRequest
	if err := httpapi.DecodeJSON(r, &b); err != nil {
		return err
	}
	var f apierr.Fields
	switch {
	case b.Text == nil:
		f.Add("Markdown", "text", apierr.CodeMissingField)
	case len(*b.Text) > maxText:
		f.Add("Markdown", "text", apierr.CodeInvalid)
	}
	if b.Mode != "" && b.Mode != "markdown" && b.Mode != "gfm" {
		f.Add("Markdown", "mode", apierr.CodeInvalid)
	}
	if err := f.Err(); err != nil {
		return err
	}
	opts := markdown.Options{GFM: b.Mode == "gfm"}
	if opts.GFM {
		repo, err := h.contextRepo(r.Context(), b.Context)
		if err != nil {
			return err
		}
		opts.Resolve = h.Resolver(r.Context(), repo)
	}
	return writeHTML(w, []byte(*b.Text), opts)
}

func (h *Handler) renderRaw(w http.ResponseWriter, r *http.Request) error {
	text, err := io.ReadAll(io.LimitReader(r.Body, maxText+1))
	if err != nil {
		return err
	}
	if len(text) > maxText {
		return apierr.Invalid("Markdown", "text", apierr.CodeInvalid)
	}
	return writeHTML(w, text, markdown.Options{})
}

func writeHTML(w http.ResponseWriter, text []byte, opts markdown.Options) error {
	out, err := markdown.Render(text, opts)
	if err != nil {
		return err
	}
	w.Header().Set("Content-Type", "text/html;charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(out)
	return nil
}

// contextRepo is the repository "owner/name" names when the caller may
// read it; nil otherwise (its references then stay text, as the
// platform leaves them).
func (h *Handler) contextRepo(ctx context.Context, name string) (*repos.Repository, error) {
	owner, repoName, ok := strings.Cut(name, "/")
	if !ok {
		return nil, nil
	}
	repo, err := repos.ByOwnerAndName(ctx, h.DB, owner, repoName)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	role, err := access.ListedRepoRole(ctx, h.DB, auth.PrincipalFrom(ctx), repo)
	if err != nil || role == auth.RoleNone {
		return nil, err
	}
	return repo, nil
}

// Resolver looks up, in one query each, the accounts a text mentions
// and the issues and pull requests of repo (nil: none) it references,
// with their web addresses: markdown.Options.Resolve as POST /markdown
// in gfm mode sets it (the web pages render comments with it too).
func (h *Handler) Resolver(ctx context.Context, repo *repos.Repository) func([]string, []int64) (markdown.Resolved, error) {
	web := accounts.WebBase(httpapi.BaseURL(ctx))
	return func(logins []string, numbers []int64) (markdown.Resolved, error) {
		res := markdown.Resolved{Users: map[string]string{}, Issues: map[int64]markdown.Issue{}}
		found, err := accounts.ByLogins(ctx, h.DB, logins)
		if err != nil {
			return res, err
		}
		for _, login := range logins {
			if a, ok := found[strings.ToLower(login)]; ok {
				res.Users[login] = accounts.HTMLURL(httpapi.BaseURL(ctx), a)
			}
		}
		if repo == nil || len(numbers) == 0 {
			return res, nil
		}
		return res, h.issues(ctx, repo, web, numbers, res.Issues)
	}
}

// RenderBody renders a Markdown body of an API answer for the html, text
// and full media types (httpapi.Config.Bodies): as comments are (GFM),
// mentions linked, #123 within the request's repository, if it has one.
func (h *Handler) RenderBody(ctx context.Context, body string) (html, text string, err error) {
	out, err := markdown.Render([]byte(body), markdown.Options{GFM: true, Resolve: h.Resolver(ctx, repos.From(ctx))})
	if err != nil {
		return "", "", err
	}
	return string(out), markdown.PlainText(out), nil
}
