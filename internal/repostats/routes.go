// Package repostats serves statistics computed from a repository's git
// history and files: the weekly statistics (stats/contributors,
// code_frequency, commit_activity, participation, punch_card), the
// contributors list and the languages. Each is computed from the default
// branch's head, synchronously in the request that first asks after a
// push (one git log with numstat; one walk of the head's tree, languages
// told by go-enry, linguist's port), and kept in repository_stats keyed
// by that head, so that later requests read it back until the branch
// moves.
package repostats

import (
	"net/http"
	"sort"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// Handler serves the statistics endpoints.
type Handler struct {
	Service *Service
}

// Routes is the statistics route table: read access to the repository
// (public ones anonymously); fine-grained tokens need Metadata (read), as
// the platform's.
func (h *Handler) Routes() []httpapi.Route {
	read := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("metadata:read"), TokenTypes: auth.AllTokenTypes}
	stats := "/repos/{owner}/{repo}/stats/"
	return []httpapi.Route{
		{Method: "GET", Pattern: stats + "contributors", Handle: h.contributorStats, Auth: read},
		{Method: "GET", Pattern: stats + "code_frequency", Handle: h.codeFrequency, Auth: read},
		{Method: "GET", Pattern: stats + "commit_activity", Handle: h.commitActivity, Auth: read},
		{Method: "GET", Pattern: stats + "participation", Handle: h.participation, Auth: read},
		{Method: "GET", Pattern: stats + "punch_card", Handle: h.punchCard, Auth: read},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/contributors", Handle: h.contributors, Auth: read},
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/languages", Handle: h.languages, Auth: read},
	}
}

// withHistory runs fn with the repository's history; an empty repository
// is a 204 without body.
func (h *Handler) withHistory(w http.ResponseWriter, r *http.Request, fn func(*repos.Repository, *History) error) error {
	repo := repos.From(r.Context())
	hist, err := h.Service.History(r.Context(), repo)
	if err != nil {
		return err
	}
	if hist == nil || hist.Empty() {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	return fn(repo, hist)
}

// contributorStats answers GET .../stats/contributors.
func (h *Handler) contributorStats(w http.ResponseWriter, r *http.Request) error {
	return h.withHistory(w, r, func(_ *repos.Repository, hist *History) error {
		linked, err := h.Service.accountsOf(r.Context(), hist)
		if err != nil {
			return err
		}
		base := httpapi.BaseURL(r.Context())
		httpapi.WriteJSON(w, http.StatusOK, ContributorActivity(base, hist, linked, h.Service.now()))
		return nil
	})
}

// codeFrequency answers GET .../stats/code_frequency.
func (h *Handler) codeFrequency(w http.ResponseWriter, r *http.Request) error {
	return h.withHistory(w, r, func(_ *repos.Repository, hist *History) error {
		httpapi.WriteJSON(w, http.StatusOK, CodeFrequency(hist, h.Service.now()))
		return nil
	})
}

// commitActivity answers GET .../stats/commit_activity.
func (h *Handler) commitActivity(w http.ResponseWriter, r *http.Request) error {
	return h.withHistory(w, r, func(_ *repos.Repository, hist *History) error {
		httpapi.WriteJSON(w, http.StatusOK, CommitActivity(hist, h.Service.now()))
		return nil
	})
}

// participation answers GET .../stats/participation; an empty repository
// has 52 weeks of nothing.
func (h *Handler) participation(w http.ResponseWriter, r *http.Request) error {
	repo := repos.From(r.Context())
	hist, err := h.Service.History(r.Context(), repo)
	if err != nil {
		return err
	}
	if hist == nil {
		hist = &History{}
	}
	linked, err := h.Service.accountsOf(r.Context(), hist)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, Participation(hist, linked, repo.Owner.ID, h.Service.now()))
	return nil
}

// punchCard answers GET .../stats/punch_card.
func (h *Handler) punchCard(w http.ResponseWriter, r *http.Request) error {
	return h.withHistory(w, r, func(_ *repos.Repository, hist *History) error {
		httpapi.WriteJSON(w, http.StatusOK, PunchCard(hist))
		return nil
	})
}

// languages answers GET .../languages: bytes per language, an empty
// object for an empty repository.
func (h *Handler) languages(w http.ResponseWriter, r *http.Request) error {
	langs, err := h.Service.Languages(r.Context(), repos.From(r.Context()))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, langs)
	return nil
}

// userContributorJSON is a contributor with an account.
type userContributorJSON struct {
	accounts.SimpleUser
	Contributions int `json:"contributions"`
}

// anonContributorJSON is an author email matched to no account.
type anonContributorJSON struct {
	Email         string `json:"email"`
	Name          string `json:"name"`
	Type          string `json:"type"`
	Contributions int    `json:"contributions"`
}

// contributors answers GET .../contributors[?anon=1]: accounts by their
// commits (merges included; an account's emails together), most first;
// with anon, the authors matched to no account too. Paged.
func (h *Handler) contributors(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	anon := r.URL.Query().Get("anon")
	withAnon := anon == "1" || strings.EqualFold(anon, "true")
	return h.withHistory(w, r, func(_ *repos.Repository, hist *History) error {
		linked, err := h.Service.accountsOf(r.Context(), hist)
		if err != nil {
			return err
		}
		list := contributorList(httpapi.BaseURL(r.Context()), hist, linked, withAnon)
		httpapi.SetLinks(w, r, page, len(list))
		httpapi.WriteJSON(w, http.StatusOK, httpapi.Slice(page, list))
		return nil
	})
}

// contributorList is the contributors, most commits first (ties: in the
// order of their newest commits).
func contributorList(base string, hist *History, linked map[string]*accounts.Account, withAnon bool) []any {
	type entry struct {
		n int
		v any
	}
	var entries []*entry
	byAccount := map[int64]*entry{}
	users := map[int64]*userContributorJSON{}
	for _, a := range hist.Authors {
		acc := linked[strings.ToLower(a.Email)]
		if acc == nil {
			if withAnon {
				entries = append(entries, &entry{n: a.Commits, v: anonContributorJSON{Email: a.Email, Name: a.Name,
					Type: "Anonymous", Contributions: a.Commits}})
			}
			continue
		}
		if e := byAccount[acc.ID]; e != nil {
			e.n += a.Commits
			users[acc.ID].Contributions += a.Commits
			continue
		}
		u := &userContributorJSON{SimpleUser: accounts.ToSimpleUser(base, acc), Contributions: a.Commits}
		users[acc.ID] = u
		e := &entry{n: a.Commits, v: u}
		byAccount[acc.ID] = e
		entries = append(entries, e)
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].n > entries[j].n })
	out := make([]any, len(entries))
	for i, e := range entries {
		out[i] = e.v
	}
	return out
}
