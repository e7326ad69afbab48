package search

import (
	"strings"

	"forgeapi/internal/apierr"
)

// MaxResults is how deep a search pages, as the platform's: the first
// 1,000 results.
const MaxResults = 1000

// CheckText refuses, with the platform's 422s, a query that is empty or
// longer than MaxLength characters.
func CheckText(text string) error {
	if strings.TrimSpace(text) == "" {
		return apierr.Invalid("Search", "q", apierr.CodeMissing)
	}
	if len([]rune(text)) > MaxLength {
		return apierr.Custom("Search", "q", "The search is longer than 256 characters.")
	}
	return nil
}

// CheckDepth refuses a page that reaches past the first MaxResults
// results (offset and limit are the page's).
func CheckDepth(offset, limit int) error {
	if offset+limit > MaxResults {
		return apierr.Custom("Search", "q", "Only the first 1000 search results are available")
	}
	return nil
}

// Direction is the SQL direction of a search's order parameter: " DESC"
// for "" and "desc", " ASC" for "asc"; anything else is a 422.
func Direction(order string) (string, error) {
	switch order {
	case "", "desc":
		return " DESC", nil
	case "asc":
		return " ASC", nil
	}
	return "", apierr.Invalid("Search", "order", apierr.CodeInvalid)
}

// InvalidQualifier is the 422 of a qualifier whose value cannot be read.
func InvalidQualifier(ql Qualifier) error {
	return apierr.Custom("Search", "q", "The value %q of the qualifier %q is not valid.", ql.Value, ql.Key)
}
