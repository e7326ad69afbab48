package gists

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sort"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// gist returns the gist the path names: 404 when there is none.
func (h *Handler) gist(r *http.Request) (*Gist, error) {
	g, err := ByName(r.Context(), h.Service.DB, r.PathValue("gist_id"))
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound()
	}
	return g, err
}

// owned returns the gist the path names when the caller owns it; another
// caller gets the 404 the platform answers.
func (h *Handler) owned(r *http.Request) (*Gist, error) {
	g, err := h.gist(r)
	if err != nil {
		return nil, err
	}
	if g.Owner.ID != auth.PrincipalFrom(r.Context()).UserID() {
		return nil, apierr.NotFound()
	}
	return g, nil
}

// caller is the authenticated account.
func (h *Handler) caller(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// writeGist answers one gist as gist-simple: its files with content at
// rev, its history, forks and the gist it was forked from.
func (h *Handler) writeGist(w http.ResponseWriter, r *http.Request, status int, g *Gist, rev string) error {
	ctx := r.Context()
	base := httpapi.BaseURL(ctx)
	dir := h.Service.Dir(g.Name)
	files, err := Files(dir, rev, true)
	if err != nil {
		return err
	}
	counts, err := CommentCounts(ctx, h.Service.DB, []*Gist{g})
	if err != nil {
		return err
	}
	j := toJSON(base, g, files, counts[g.ID])
	revs, _, err := History(ctx, dir, 0, 100)
	if err != nil {
		return err
	}
	history := make([]historyJSON, 0, len(revs))
	owner := accounts.ToSimpleUser(base, g.Owner)
	for _, rv := range revs {
		history = append(history, toHistoryJSON(base, g, rv, &owner))
	}
	j.History = &history
	forks, _, err := Forks(ctx, h.Service.DB, g, 0, 100)
	if err != nil {
		return err
	}
	fj, err := h.forksJSON(ctx, base, forks)
	if err != nil {
		return err
	}
	j.Forks = &fj
	if g.ForkOfID != 0 {
		src, err := ByID(ctx, h.Service.DB, g.ForkOfID)
		if err == nil {
			srcFiles, err := Files(h.Service.Dir(src.Name), "HEAD", false)
			if err != nil {
				return err
			}
			n, err := CommentCounts(ctx, h.Service.DB, []*Gist{src})
			if err != nil {
				return err
			}
			sj := toJSON(base, src, srcFiles, n[src.ID])
			j.ForkOf = &sj
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	if status == http.StatusCreated {
		httpapi.WriteCreated(w, j.URL, j)
		return nil
	}
	httpapi.WriteJSON(w, status, j)
	return nil
}

// forksJSON renders the forks as a gist's forks entries, their owners as
// full users read in one query.
func (h *Handler) forksJSON(ctx context.Context, base string, forks []*Gist) ([]forkJSON, error) {
	ids := make([]int64, len(forks))
	for i, f := range forks {
		ids[i] = f.Owner.ID
	}
	users, err := accounts.PublicUsers(ctx, h.Service.DB, ids)
	if err != nil {
		return nil, err
	}
	out := make([]forkJSON, 0, len(forks))
	for _, f := range forks {
		j := forkJSON{ID: f.Name, URL: base + "/gists/" + f.Name, CreatedAt: wire.T(f.CreatedAt), UpdatedAt: wire.T(f.UpdatedAt)}
		if u, ok := users[f.Owner.ID]; ok {
			j.User = &u
		}
		out = append(out, j)
	}
	return out, nil
}

// writeList answers a page of gists as base-gist objects (files without
// content).
func (h *Handler) writeList(w http.ResponseWriter, r *http.Request, page httpapi.Page, list []*Gist, more bool) error {
	ctx := r.Context()
	base := httpapi.BaseURL(ctx)
	counts, err := CommentCounts(ctx, h.Service.DB, list)
	if err != nil {
		return err
	}
	out := make([]gistJSON, 0, len(list))
	for _, g := range list {
		files, err := Files(h.Service.Dir(g.Name), "HEAD", false)
		if err != nil {
			return err
		}
		out = append(out, toJSON(base, g, files, counts[g.ID]))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listFilter reads since and the page of a list request.
func listFilter(r *http.Request) (ListFilter, httpapi.Page, error) {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return ListFilter{}, page, err
	}
	f := ListFilter{Offset: page.Offset(), Limit: page.Limit()}
	if s := r.URL.Query().Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return f, page, apierr.Invalid("Gist", "since", apierr.CodeInvalid)
		}
		f.Since = &t
	}
	return f, page, nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request, set func(*ListFilter)) error {
	f, page, err := listFilter(r)
	if err != nil {
		return err
	}
	set(&f)
	list, more, err := List(r.Context(), h.Service.DB, f)
	if err != nil {
		return err
	}
	return h.writeList(w, r, page, list, more)
}

// seesSecret reports whether the principal's credentials show its user's
// secret gists: a permission-based token needs the Gists permission.
func seesSecret(p *auth.Principal) bool {
	return !p.FineGrained() || p.Token.Grant.Has(auth.Need{Name: "gists", Level: auth.Read})
}

// listOwn answers GET /gists: the caller's gists, or every public gist
// for an anonymous caller.
func (h *Handler) listOwn(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	return h.list(w, r, func(f *ListFilter) {
		if p.UserID() != 0 {
			f.Owner, f.Secret = p.UserID(), seesSecret(p)
		}
	})
}

func (h *Handler) listPublic(w http.ResponseWriter, r *http.Request) error {
	return h.list(w, r, func(*ListFilter) {})
}

// listStarred answers GET /gists/starred: the gists the caller stars,
// secret ones included (the caller knows them).
func (h *Handler) listStarred(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	return h.list(w, r, func(f *ListFilter) { f.StarredBy, f.Secret = p.UserID(), true })
}

// listUser answers GET /users/{username}/gists: the user's public gists,
// and their secret ones to the user.
func (h *Handler) listUser(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	u := accounts.UserFrom(r.Context())
	return h.list(w, r, func(f *ListFilter) {
		f.Owner, f.Secret = u.ID, u.ID == p.UserID() && seesSecret(p)
	})
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	g, err := h.gist(r)
	if err != nil {
		return err
	}
	return h.writeGist(w, r, http.StatusOK, g, "HEAD")
}

// getRevision answers GET /gists/{gist_id}/{sha}: the gist with its files
// as the commit of its history left them.
func (h *Handler) getRevision(w http.ResponseWriter, r *http.Request) error {
	g, err := h.gist(r)
	if err != nil {
		return err
	}
	sha, err := revision(r.Context(), h.Service.Dir(g.Name), r.PathValue("sha"))
	if err != nil {
		return err
	}
	return h.writeGist(w, r, http.StatusOK, g, sha)
}

// createRequest is the body of POST /gists.
type createRequest struct {
	Description *string         `json:"description"`
	Public      json.RawMessage `json:"public"`
	Files       map[string]*struct {
		Content *string `json:"content"`
	} `json:"files"`
}

// public reads the public field: a boolean, or the strings "true" and
// "false" the platform also takes; absent is false.
func (b createRequest) public() (bool, error) {
	switch string(b.Public) {
	case "", "null", "false", `"false"`:
		return false, nil
	case "true", `"true"`:
		return true, nil
	}
	return false, apierr.Invalid("Gist", "public", apierr.CodeInvalid)
}

// create answers POST /gists: 201 with the new gist.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var body createRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	public, err := body.public()
	if err != nil {
		return err
	}
	files := make(map[string]string, len(body.Files))
	for name, f := range body.Files {
		if f == nil || f.Content == nil {
			return apierr.Custom("Gist", "files", "file %q has no content", name)
		}
		files[name] = *f.Content
	}
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	g, err := h.Service.Create(r.Context(), user, NewGist{Files: files, Description: body.Description, Public: public})
	if err != nil {
		return err
	}
	return h.writeGist(w, r, http.StatusCreated, g, "HEAD")
}

// updateFile is one entry of PATCH /gists/{gist_id}'s files: null
// deletes the file.
type updateFile struct {
	Content  *string `json:"content"`
	Filename *string `json:"filename"`
}

// update answers PATCH /gists/{gist_id}: one commit of the file changes
// (content, a rename with filename, a deletion with null), and the
// description.
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	g, err := h.owned(r) // anyone else's PATCH is a 404 whatever its body
	if err != nil {
		return err
	}
	var body struct {
		Description *string                `json:"description"`
		Files       map[string]*updateFile `json:"files"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.Description == nil && len(body.Files) == 0 {
		return apierr.Invalid("Gist", "files", apierr.CodeMissingField)
	}
	u := Update{Description: body.Description}
	for _, name := range sortedKeys(body.Files) {
		f := body.Files[name]
		switch {
		case f == nil || (f.Content == nil && f.Filename == nil):
			u.Files = append(u.Files, fileEdit{Name: name, Delete: true})
		default:
			e := fileEdit{Name: name, Content: f.Content}
			if f.Filename != nil {
				e.NewName = *f.Filename
			}
			u.Files = append(u.Files, e)
		}
	}
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	if g, err = h.Service.Edit(r.Context(), g, user, u); err != nil {
		return err
	}
	return h.writeGist(w, r, http.StatusOK, g, "HEAD")
}

func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	g, err := h.owned(r)
	if err != nil {
		return err
	}
	if err := h.Service.Delete(r.Context(), g); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// listCommits answers GET /gists/{gist_id}/commits: the gist's history,
// newest first, paged.
func (h *Handler) listCommits(w http.ResponseWriter, r *http.Request) error {
	g, err := h.gist(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	revs, more, err := History(r.Context(), h.Service.Dir(g.Name), page.Offset(), page.Limit())
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	owner := accounts.ToSimpleUser(base, g.Owner)
	out := make([]historyJSON, 0, len(revs))
	for _, rv := range revs {
		out = append(out, toHistoryJSON(base, g, rv, &owner))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// fork answers POST /gists/{gist_id}/forks: 201 with the caller's fork.
func (h *Handler) fork(w http.ResponseWriter, r *http.Request) error {
	g, err := h.gist(r)
	if err != nil {
		return err
	}
	user, err := h.caller(r)
	if err != nil {
		return err
	}
	f, err := h.Service.Fork(r.Context(), g, user)
	if err != nil {
		return err
	}
	files, err := Files(h.Service.Dir(f.Name), "HEAD", false)
	if err != nil {
		return err
	}
	j := toJSON(httpapi.BaseURL(r.Context()), f, files, 0)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// listForks answers GET /gists/{gist_id}/forks: the forks as gists.
func (h *Handler) listForks(w http.ResponseWriter, r *http.Request) error {
	g, err := h.gist(r)
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	list, more, err := Forks(r.Context(), h.Service.DB, g, page.Offset(), page.Limit())
	if err != nil {
		return err
	}
	return h.writeList(w, r, page, list, more)
}

// sortedKeys returns the map's keys in order, so that a change applies
// its files the same way every time.
func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
