package search

import (
	"strings"
	"unicode/utf8"

	"forgeapi/internal/store"
)

// The searches match words with each database's own engine: SQLite's
// FTS5 tables with the trigram tokenizer (an external-content table over
// one text column, kept by triggers), PostgreSQL's pg_trgm GIN indexes
// on lower(column), which serve LIKE '%words%'. These two functions are
// the only places that know the difference.

// LikeOp is column LIKE ? in the dialect, for a pattern made by Like
// (backslash escapes): PostgreSQL escapes with a backslash already, and
// its trigram indexes serve the form without an ESCAPE clause.
func LikeOp(dialect store.Dialect, column string) string {
	if dialect == store.Postgres {
		return column + " LIKE ?"
	}
	return column + ` LIKE ? ESCAPE '\'`
}

// TextMatch is the condition, with its one argument, that the text
// column of the rows whose id column is id holds text (case-insensitively):
// on SQLite, for three characters and more, a phrase of fts, the
// trigram FTS5 table over that column (its rowid the row's id); else
// lower(column) LIKE, which PostgreSQL's trigram index serves.
func TextMatch(dialect store.Dialect, id, fts, column, text string) (string, any) {
	if dialect != store.Postgres && utf8.RuneCountInString(text) >= 3 {
		return id + " IN (SELECT rowid FROM " + fts + " WHERE " + fts + " MATCH ?)",
			`"` + strings.ReplaceAll(text, `"`, `""`) + `"`
	}
	return LikeOp(dialect, "lower("+column+")"), Like(text)
}
