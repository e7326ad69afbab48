package pulls

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Filter selects a repository's pull requests: State open (default),
// closed or all; Head "owner:branch" (or "owner"); Base a branch; Sort
// created (default), updated, popularity (comments) or long-running;
// Desc the direction.
type Filter struct {
	State, Head, Base, Sort string
	Desc                    bool
	Page                    httpapi.Page
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// List returns a page of the repository's pull requests and whether more
// follow.
func (s *Service) List(ctx context.Context, repo *repos.Repository, f Filter) ([]*PullRequest, bool, error) {
	where := []string{"p.repository_id = $1"}
	args := []any{repo.ID}
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	if f.State != "all" {
		where = append(where, "i.state = "+arg(f.State))
	}
	if f.Base != "" {
		where = append(where, "p.base_ref = "+arg(f.Base))
	}
	if f.Head != "" {
		login, ref, hasRef := strings.Cut(f.Head, ":")
		owner, err := accounts.ByLogin(ctx, s.DB, login)
		if errors.Is(err, store.ErrNotFound) {
			return []*PullRequest{}, false, nil
		} else if err != nil {
			return nil, false, err
		}
		where = append(where, "p.head_repository_id IN (SELECT id FROM repositories WHERE owner_id = "+arg(owner.ID)+")")
		if hasRef {
			where = append(where, "p.head_ref = "+arg(ref))
		}
	}
	order := map[string]string{"created": "i.created_at", "updated": "i.updated_at", "popularity": "i.comments",
		"long-running": "i.created_at"}[f.Sort]
	dir := " ASC"
	if f.Desc != (f.Sort == "long-running") {
		dir = " DESC"
	}
	if f.Sort == "long-running" {
		where = append(where, "i.state = 'open'")
	}
	query := `SELECT ` + prColumns + `, p.issue_id FROM pull_requests p JOIN issues i ON i.id = p.issue_id WHERE ` + strings.Join(where, " AND ") +
		` ORDER BY ` + order + dir + `, p.id` + dir + ` LIMIT ` + arg(f.Page.Limit()+1) + ` OFFSET ` + arg(f.Page.Offset())
	out, err := s.completePage(ctx, repo, store.Dynamic+query, args...)
	if err != nil {
		return nil, false, err
	}
	more := len(out) > f.Page.Limit()
	if more {
		out = out[:f.Page.Limit()]
	}
	return out, more, nil
}
