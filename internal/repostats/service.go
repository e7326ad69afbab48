package repostats

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// MaxLinkedEmails is how many author emails (newest first) are matched to
// accounts; the others are anonymous, as on the platform.
const MaxLinkedEmails = 500

// noreplyDomain is the domain of the addresses the server writes commits
// with for accounts (LOGIN@users.noreply.forgeapi.local).
const noreplyDomain = "@users.noreply.forgeapi.local"

// Service computes a repository's statistics from its default branch and
// keeps them per head in repository_stats: a push that moves the head
// makes the next request compute them again. Computing is synchronous, in
// the request: one git log for the history, one tree walk for languages.
type Service struct {
	DB    *store.DB
	Repos *repos.Service
	Now   func() time.Time // the clock of the weekly windows; nil is time.Now
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return time.Now()
	}
	return s.Now()
}

// The kinds of rows of repository_stats.
const (
	kindHistory   = "history"
	kindLanguages = "languages"
)

// head is the commit the repository's default branch points at, "" for
// an empty repository (or one whose default branch does not exist).
func (s *Service) head(r *repos.Repository) (string, error) {
	g, err := gitread.Open(s.Repos.GitDir(r.ID))
	if errors.Is(err, gitread.ErrRepositoryNotFound) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer g.Close()
	sha, err := g.Resolve("refs/heads/" + r.DefaultBranch)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return "", nil
	}
	return sha, err
}

// cached reads the kept document of kind for the repository at head into
// v; false when there is none for that head.
func (s *Service) cached(ctx context.Context, repoID int64, kind, head string, v any) (bool, error) {
	var at, body string
	err := s.DB.QueryRowContext(ctx, `SELECT head_sha, body FROM repository_stats
		WHERE repository_id = $1 AND kind = $2`, repoID, kind).Scan(&at, &body)
	if errors.Is(store.Normalize(err), store.ErrNotFound) || (err == nil && at != head) {
		return false, nil
	}
	if err != nil {
		return false, store.Normalize(err)
	}
	if err := json.Unmarshal([]byte(body), v); err != nil {
		return false, nil // a document of an older shape: compute again
	}
	return true, nil
}

// keep stores the document of kind computed at head.
func (s *Service) keep(ctx context.Context, repoID int64, kind, head string, v any) error {
	body, err := json.Marshal(v)
	if err != nil {
		return err
	}
	_, err = s.DB.ExecContext(ctx, `INSERT INTO repository_stats (repository_id, kind, head_sha, body)
		VALUES ($1, $2, $3, $4) ON CONFLICT (repository_id, kind)
		DO UPDATE SET head_sha = excluded.head_sha, body = excluded.body`, repoID, kind, head, string(body))
	return store.Normalize(err)
}

// History is the aggregated history of the repository's default branch,
// from the cache when it was computed at the branch's current head; nil
// for an empty repository.
func (s *Service) History(ctx context.Context, r *repos.Repository) (*History, error) {
	head, err := s.head(r)
	if err != nil || head == "" {
		return nil, err
	}
	h := &History{}
	ok, err := s.cached(ctx, r.ID, kindHistory, head, h)
	if err != nil || ok {
		return h, err
	}
	h, err = ReadHistory(ctx, s.Repos.GitDir(r.ID), head)
	if err != nil {
		return nil, err
	}
	return h, s.keep(ctx, r.ID, kindHistory, head, h)
}

// Languages is the bytes of each language in the default branch's tree,
// from the cache when computed at the current head; empty for an empty
// repository.
func (s *Service) Languages(ctx context.Context, r *repos.Repository) (map[string]int64, error) {
	head, err := s.head(r)
	if err != nil || head == "" {
		return map[string]int64{}, err
	}
	langs := map[string]int64{}
	ok, err := s.cached(ctx, r.ID, kindLanguages, head, &langs)
	if err != nil || ok {
		return langs, err
	}
	g, err := gitread.Open(s.Repos.GitDir(r.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	langs, err = CountLanguages(ctx, g, head)
	if err != nil {
		return nil, err
	}
	return langs, s.keep(ctx, r.ID, kindLanguages, head, langs)
}

// accountsOf matches the first MaxLinkedEmails authors' emails to
// accounts (an address of a user, or the server's noreply
// address of a login): lower-cased email to account.
func (s *Service) accountsOf(ctx context.Context, h *History) (map[string]*accounts.Account, error) {
	out := map[string]*accounts.Account{}
	for i, a := range h.Authors {
		if i == MaxLinkedEmails {
			break
		}
		acc, err := s.accountOf(ctx, a.Email)
		if err != nil {
			return nil, err
		}
		if acc != nil {
			out[strings.ToLower(a.Email)] = acc
		}
	}
	return out, nil
}

func (s *Service) accountOf(ctx context.Context, email string) (*accounts.Account, error) {
	var acc *accounts.Account
	var err error
	if login, ok := cutSuffixFold(email, noreplyDomain); ok {
		acc, err = accounts.ByLogin(ctx, s.DB, login)
	} else {
		acc, err = accounts.ByEmail(ctx, s.DB, email)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return acc, err
}

func cutSuffixFold(s, suffix string) (string, bool) {
	if len(s) < len(suffix) || !strings.EqualFold(s[len(s)-len(suffix):], suffix) {
		return "", false
	}
	return s[:len(s)-len(suffix)], true
}

// sortPairs orders an author's weeks and days by time.
func sortPairs(a *Author) {
	sort.Slice(a.Weeks, func(i, j int) bool { return a.Weeks[i][0] < a.Weeks[j][0] })
	sort.Slice(a.Days, func(i, j int) bool { return a.Days[i][0] < a.Days[j][0] })
}
