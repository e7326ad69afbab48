package httpapi

import (
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
)

// Page is a list request's page: Page counts from 1, PerPage is 1..100.
type Page struct {
	Page    int
	PerPage int
}

// Offset is the number of items before the page. It saturates at
// math.MaxInt instead of overflowing, so that a page number far past any
// list (a client can send ?page=9223372036854775807) is an empty page,
// never a negative offset.
func (p Page) Offset() int {
	if p.PerPage > 0 && p.Page-1 > math.MaxInt/p.PerPage {
		return math.MaxInt
	}
	return (p.Page - 1) * p.PerPage
}

// Limit is PerPage, for SQL.
func (p Page) Limit() int { return p.PerPage }

// Slice returns the page's part of items.
func Slice[T any](p Page, items []T) []T {
	start := min(p.Offset(), len(items))
	end := min(start+p.PerPage, len(items))
	return items[start:end]
}

// ParsePage reads per_page (default 30, above 100 served as 100) and page
// (default 1). A value that is not a positive integer is a 422.
func ParsePage(r *http.Request) (Page, error) {
	p := Page{Page: 1, PerPage: 30}
	if r.URL.RawQuery == "" {
		return p, nil // no query to parse (and no map made for it)
	}
	var fields apierr.Fields
	q := r.URL.Query()
	if s := q.Get("per_page"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			fields.Add("", "per_page", apierr.CodeInvalid)
		} else if v > 0 {
			p.PerPage = min(v, 100)
		}
	}
	if s := q.Get("page"); s != "" {
		v, err := strconv.Atoi(s)
		if err != nil || v < 0 {
			fields.Add("", "page", apierr.CodeInvalid)
		} else if v > 0 {
			p.Page = v
		}
	}
	return p, fields.Err()
}

// SetLinks writes the Link header of a page of a list of total items:
// first and prev when there is a page before, next and last when there
// is one after.
func SetLinks(w http.ResponseWriter, r *http.Request, p Page, total int) {
	last := max(1, (total+p.PerPage-1)/p.PerPage)
	setLinks(w, r, p, p.Page < last, last)
}

// SetLinksMore writes the Link header when the total is not known: next
// is given when more is true; last is not given.
func SetLinksMore(w http.ResponseWriter, r *http.Request, p Page, more bool) {
	setLinks(w, r, p, more, 0)
}

func setLinks(w http.ResponseWriter, r *http.Request, p Page, more bool, last int) {
	var links []string
	add := func(page int, rel string) {
		links = append(links, fmt.Sprintf(`<%s>; rel="%s"`, pageURL(r, p, page), rel))
	}
	if p.Page > 1 {
		add(max(1, min(p.Page-1, max(last, 1))), "prev")
	}
	if more {
		add(p.Page+1, "next")
		if last > 0 {
			add(last, "last")
		}
	}
	if p.Page > 1 {
		add(1, "first")
	}
	if len(links) > 0 {
		w.Header().Set("Link", strings.Join(links, ", "))
	}
}

func pageURL(r *http.Request, p Page, page int) string {
	q := r.URL.Query()
	q.Set("page", strconv.Itoa(page))
	if q.Has("per_page") {
		q.Set("per_page", strconv.Itoa(p.PerPage))
	}
	return BaseURL(r.Context()) + r.URL.Path + "?" + q.Encode()
}

// LinkURL builds an absolute URL of this API for a path and query.
func LinkURL(r *http.Request, path string, q url.Values) string {
	u := BaseURL(r.Context()) + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// ParseSince reads the since parameter of a list paged by id (GET /users,
// /organizations): the id after which the page starts, 0 when absent.
func ParseSince(r *http.Request) (int64, error) {
	s := r.URL.Query().Get("since")
	if s == "" {
		return 0, nil
	}
	since, err := strconv.ParseInt(s, 10, 64)
	if err != nil || since < 0 {
		return 0, apierr.Invalid("", "since", apierr.CodeInvalid)
	}
	return since, nil
}

// SetNextSince writes the Link to the next page of a list paged by id
// when the page of n items was full: since its last id, and the
// request's per_page.
func SetNextSince(w http.ResponseWriter, r *http.Request, p Page, n int, lastID int64) {
	if n < p.PerPage {
		return
	}
	q := url.Values{"since": {strconv.FormatInt(lastID, 10)}}
	if r.URL.Query().Has("per_page") {
		q.Set("per_page", strconv.Itoa(p.PerPage))
	}
	w.Header().Set("Link", `<`+LinkURL(r, r.URL.Path, q)+`>; rel="next"`)
}
