package prereceive

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
)

// listOrder is a list's sort (created, updated or name; default created)
// and direction (default desc).
type listOrder struct {
	by   string
	desc bool
}

// listKey is what a list is sorted by.
type listKey struct {
	id               int64
	name             string
	created, updated time.Time
}

// parseListing reads the page and the order of a list; an unknown sort or
// direction is a 422.
func parseListing(r *http.Request) (httpapi.Page, listOrder, error) {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return page, listOrder{}, err
	}
	o := listOrder{by: "created", desc: true}
	var f apierr.Fields
	switch s := r.URL.Query().Get("sort"); s {
	case "":
	case "created", "updated", "name":
		o.by = s
	default:
		f.Add("", "sort", apierr.CodeInvalid)
	}
	switch d := r.URL.Query().Get("direction"); d {
	case "", "desc":
	case "asc":
		o.desc = false
	default:
		f.Add("", "direction", apierr.CodeInvalid)
	}
	return page, o, f.Err()
}

// sort orders items by o, ties by id.
func sortList[T any](o listOrder, items []T, key func(T) listKey) {
	slices.SortStableFunc(items, func(a, b T) int {
		ka, kb := key(a), key(b)
		var c int
		switch o.by {
		case "name":
			c = cmp.Compare(strings.ToLower(ka.name), strings.ToLower(kb.name))
		case "updated":
			c = ka.updated.Compare(kb.updated)
		}
		if c == 0 {
			c = cmp.Compare(ka.id, kb.id)
		}
		if o.desc {
			return -c
		}
		return c
	})
}
