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

// FTS5Match is the SQLite FTS5 MATCH expression that selects the rows
// holding, in the columns named, every word of terms not negated and
// none of those negated, for the words of three characters and more
// (the trigram tokenizer's shortest); rest are the terms it leaves to
// other conditions. expr is "" and rest every term when no such word is
// positive: the text index cannot drive the query then.
func FTS5Match(terms []Term, columns []string) (expr string, rest []Term) {
	filter := "{" + strings.Join(columns, " ") + "} : "
	var positive, negated []string
	for _, t := range terms {
		if utf8.RuneCountInString(t.Text) < 3 {
			rest = append(rest, t)
			continue
		}
		phrase := `"` + strings.ReplaceAll(t.Text, `"`, `""`) + `"`
		if t.Negated {
			negated = append(negated, phrase)
		} else {
			positive = append(positive, phrase)
		}
	}
	if len(positive) == 0 {
		return "", terms
	}
	expr = "(" + filter + "(" + strings.Join(positive, " AND ") + "))"
	for _, phrase := range negated {
		expr += " NOT (" + filter + phrase + ")"
	}
	return expr, rest
}
