package httpapi

import (
	"net/http"

	"forgeapi/internal/search"
)

// SearchRequest reads what every search endpoint reads first: the query
// q (required, at most search.MaxLength characters) and a page within
// the first search.MaxResults results; a request outside them is the
// platform's 422.
func SearchRequest(r *http.Request) (text string, page Page, err error) {
	text = r.URL.Query().Get("q")
	if err := search.CheckText(text); err != nil {
		return "", Page{}, err
	}
	if page, err = ParsePage(r); err != nil {
		return "", Page{}, err
	}
	return text, page, search.CheckDepth(page.Offset(), page.Limit())
}

// WriteSearch writes a search's answer: total_count, incomplete_results
// (false: forgeapi's searches run to the end) and the page's items, with
// the Link header of the results a client can reach (the first
// search.MaxResults).
func WriteSearch(w http.ResponseWriter, r *http.Request, page Page, total int, items any) {
	SetLinks(w, r, page, min(total, search.MaxResults))
	WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "incomplete_results": false, "items": items})
}
