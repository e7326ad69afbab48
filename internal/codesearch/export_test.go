package codesearch

import (
	"forgeapi/internal/search"
	"forgeapi/internal/store"
)

// MatchQuery is the query, with its arguments, that reads the matches of
// a code search for text by an anonymous caller.
func MatchQuery(db *store.DB, text string) (string, []any, error) {
	h := &Handler{DB: db}
	return h.matchQuery(search.Parse(text).Known(codeKeys...), nil)
}
