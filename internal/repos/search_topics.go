package repos

import (
	"cmp"
	"net/http"
	"slices"
	"strings"
	"time"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/search"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// topicJSON is the platform's topic search result. forgeapi knows topics
// only as the names repositories carry: no curated or featured topic, no
// description; a topic's times are those of the repositories that carry it.
type topicJSON struct {
	Name             string    `json:"name"`
	DisplayName      *string   `json:"display_name"`
	ShortDescription *string   `json:"short_description"`
	Description      *string   `json:"description"`
	CreatedBy        *string   `json:"created_by"`
	Released         *string   `json:"released"`
	CreatedAt        wire.Time `json:"created_at"`
	UpdatedAt        wire.Time `json:"updated_at"`
	Featured         bool      `json:"featured"`
	Curated          bool      `json:"curated"`
	Score            float64   `json:"score"`
	RepositoryCount  int       `json:"repository_count"`
}

// searchTopics answers GET /search/topics: the topics of the repositories
// the caller can see whose names hold every word of q, the most used
// first, with how many of those repositories carry each. `is:featured`
// and `is:curated` select nothing (no topic is curated here).
func (h *Handler) searchTopics(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	text, page, err := httpapi.SearchRequest(r)
	if err != nil {
		return err
	}
	q := search.Parse(text).Known("is")
	readable, err := ReadablePrivate(ctx, h.Service.DB, auth.PrincipalFrom(ctx), h.roleFunc())
	if err != nil {
		return err
	}
	where := VisibleTo(readable)
	var words []string
	for _, t := range q.Terms {
		where.Add(`lower(r.topics) LIKE ? ESCAPE '\'`, t.Negated, search.Like(t.Text))
		if !t.Negated {
			words = append(words, strings.ToLower(t.Text))
		}
	}
	for _, v := range q.Values("is") {
		if v == "featured" || v == "curated" {
			where.Add("1 = 0", false)
		}
	}
	rows, err := h.Service.DB.QueryContext(ctx, store.Dynamic+`SELECT r.topics, r.created_at, r.updated_at FROM repositories r
		JOIN accounts a ON a.id = r.owner_id WHERE r.topics <> '' AND `+where.String(), where.Args...)
	topics, err := store.ScanAll(rows, err, func(sc store.Scanner) (t carriedTopics, err error) {
		var names string
		err = sc.Scan(&names, &t.created, &t.updated)
		t.names = parseTopics(names)
		return t, err
	})
	if err != nil {
		return store.Normalize(err)
	}
	found := matchingTopics(topics, words)
	httpapi.WriteSearch(w, r, page, len(found), httpapi.Slice(page, found))
	return nil
}

// carriedTopics are one repository's topics and its times.
type carriedTopics struct {
	names            []string
	created, updated time.Time
}

// matchingTopics counts the topics that hold every word across the
// repositories, the most carried first, then by name.
func matchingTopics(repos []carriedTopics, words []string) []topicJSON {
	byName := map[string]*topicJSON{}
	for _, rt := range repos {
		for _, name := range rt.names {
			if !containsAll(name, words) {
				continue
			}
			t := byName[name]
			if t == nil {
				t = &topicJSON{Name: name, Score: 1, CreatedAt: wire.T(rt.created), UpdatedAt: wire.T(rt.updated)}
				byName[name] = t
			}
			t.RepositoryCount++
			t.CreatedAt = wire.T(minTime(t.CreatedAt.Time, rt.created))
			t.UpdatedAt = wire.T(maxTime(t.UpdatedAt.Time, rt.updated))
		}
	}
	out := make([]topicJSON, 0, len(byName))
	for _, t := range byName {
		out = append(out, *t)
	}
	slices.SortFunc(out, func(a, b topicJSON) int {
		return cmp.Or(cmp.Compare(b.RepositoryCount, a.RepositoryCount), strings.Compare(a.Name, b.Name))
	})
	return out
}

func containsAll(s string, words []string) bool {
	for _, w := range words {
		if !strings.Contains(s, w) {
			return false
		}
	}
	return true
}

func minTime(a, b time.Time) time.Time {
	if b.Before(a) {
		return b
	}
	return a
}

func maxTime(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}
