// Package codesearch is the search of what git holds: GET /search/code
// over the files of repositories' default branches and GET
// /search/commits over the commits of those branches.
//
// The index lives in the database (code_files, code_commits) and is kept
// by the Indexer: a push of a repository's default branch (or a change
// of the default branch) requests the repository's indexing in the
// push's transaction (code_search_work), and the Indexer, a leased
// worker (internal/worker), reads the new head and writes the commits
// new on the branch and the files of its tree that changed, replacing
// the repository's previous rows, in one transaction that also records
// the work done. Text files up to MaxFileSize are indexed; binary and
// larger ones are left out, as the platform's index leaves them.
//
// Each dialect matches words with its own engine (textMatch): SQLite
// with FTS5's trigram tokenizer over file content and path (one table,
// whose MATCH drives a search) and commit messages (substrings of three
// characters and more), PostgreSQL with pg_trgm GIN
// indexes under lower(column) LIKE. Visibility is checked when searching: only public
// repositories and the private ones the caller reads
// (repos.ReadablePrivate) are searched or counted.
package codesearch

import (
	"context"
	"net/http"

	"forgeapi/internal/access"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/search"
	"forgeapi/internal/store"
)

// Handler serves the code and commit searches.
type Handler struct {
	DB    *store.DB
	Repos *repos.Service
}

// Routes is the code search's route table: anyone may search, and sees
// the public repositories and the private ones they read.
func (h *Handler) Routes() []httpapi.Route {
	return []httpapi.Route{
		{Method: "GET", Pattern: "/search/code", Handle: h.searchCode, Rate: httpapi.Search,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
		{Method: "GET", Pattern: "/search/commits", Handle: h.searchCommits, Rate: httpapi.Search,
			Auth: auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}},
	}
}

// request is a search request read: the query with the qualifiers of
// keys, the page, and the private repositories the caller reads.
type request struct {
	query    search.Query
	page     httpapi.Page
	readable []int64
}

// readRequest reads q and the page; an empty or too long query, or a
// page past the first 1,000 results, is a 422.
func (h *Handler) readRequest(r *http.Request, keys []string) (request, error) {
	ctx := r.Context()
	text, page, err := httpapi.SearchRequest(r)
	if err != nil {
		return request{}, err
	}
	readable, err := repos.ReadablePrivate(ctx, h.DB, auth.PrincipalFrom(ctx), access.ListedRepoRole)
	if err != nil {
		return request{}, err
	}
	return request{query: search.Parse(text).Known(keys...), page: page, readable: readable}, nil
}

// like is the dialect's LIKE of a pattern (search.LikeOp).
func (h *Handler) like(column string) string { return search.LikeOp(h.DB.Dialect, column) }

// textMatch is search.TextMatch in the server's dialect.
func (h *Handler) textMatch(id, fts, column, text string) (string, any) {
	return search.TextMatch(h.DB.Dialect, id, fts, column, text)
}

// likeText is the lowercased text escaped for a LIKE pattern (search.Like
// without its wildcards).
func likeText(text string) string {
	s := search.Like(text)
	return s[1 : len(s)-1]
}

// repoJSONs renders the repositories of a page of results once each.
type repoJSONs struct {
	h     *Handler
	p     *auth.Principal
	base  string
	urls  repos.URLs
	cache map[int64]*repoEntry
	read  map[int64]*repos.Repository // read ahead by prefetch
}

// repoEntry is a repository and its JSON for the caller.
type repoEntry struct {
	repo *repos.Repository
	json *repos.JSON
}

func (h *Handler) repoJSONs(ctx context.Context) *repoJSONs {
	return &repoJSONs{h: h, p: auth.PrincipalFrom(ctx), base: httpapi.BaseURL(ctx), urls: repos.URLsOf(ctx), cache: map[int64]*repoEntry{}}
}

// prefetch reads the repositories of ids in one query, for get: a page
// of 30 files may name 30 repositories, a round trip each otherwise.
func (c *repoJSONs) prefetch(ctx context.Context, ids []int64) error {
	read, err := repos.ByIDs(ctx, c.h.DB, ids)
	c.read = read
	return err
}

// get is the repository of id and its JSON.
func (c *repoJSONs) get(ctx context.Context, id int64) (*repoEntry, error) {
	if e, ok := c.cache[id]; ok {
		return e, nil
	}
	repo := c.read[id]
	if repo == nil { // not prefetched (or deleted since: ByID says so)
		var err error
		if repo, err = repos.ByID(ctx, c.h.DB, id); err != nil {
			return nil, err
		}
	}
	role, err := access.ListedRepoRole(ctx, c.h.DB, c.p, repo)
	if err != nil {
		return nil, err
	}
	if c.p.Anonymous() {
		role = auth.RoleNone
	}
	st, err := c.h.Repos.Stats(ctx, repo.ID)
	if err != nil {
		return nil, err
	}
	j := repos.ToJSON(c.urls, repo, st, role)
	e := &repoEntry{repo: repo, json: &j}
	c.cache[id] = e
	return e, nil
}
