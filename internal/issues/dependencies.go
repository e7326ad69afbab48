package issues

import (
	"context"
	"errors"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// MaxBlockedBy is how many issues may block one issue (the platform's
// limit).
const MaxBlockedBy = 50

// DependencySummary counts an issue's dependencies: the issues blocking
// it and those it blocks, all of them and the open ones.
type DependencySummary struct {
	BlockedBy, TotalBlockedBy int
	Blocking, TotalBlocking   int
}

// dependencies fills the issues' DependencySummary: one query for the
// dependencies of the issues of ids (its two IN lists share the
// placeholders), and, when there are any, one for the states of the
// issues on their other side. A join of the two in one query was
// planned on PostgreSQL, for a page of 30 issues and an empty
// dependencies table never analyzed, as a parallel plan whose workers'
// start cost a quarter of a second under load.
func (l *loader) dependencies(ctx context.Context, byID map[int64]*Issue, ids []any) error {
	type edge struct{ issue, blocking int64 }
	edges, err := collect(func(s scanner) (edge, error) {
		var e edge
		return e, s.Scan(&e.issue, &e.blocking)
	})(l.q.QueryContext(ctx, store.Dynamic+`SELECT issue_id, blocking_id FROM issue_dependencies
		WHERE issue_id IN `+in(len(ids))+` OR blocking_id IN `+in(len(ids)), ids...))
	if err != nil || len(edges) == 0 {
		return err
	}
	var others []any
	for _, e := range edges {
		others = append(others, e.issue, e.blocking)
	}
	open := map[int64]bool{}
	rows, err := l.q.QueryContext(ctx, store.Dynamic+`SELECT id, state = 'open' FROM issues WHERE id IN `+in(len(others)), others...)
	if err != nil {
		return store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var isOpen bool
		if err := rows.Scan(&id, &isOpen); err != nil {
			return store.Normalize(err)
		}
		open[id] = isOpen
	}
	if err := rows.Err(); err != nil {
		return store.Normalize(err)
	}
	for _, e := range edges {
		if is := byID[e.issue]; is != nil { // blocked by e.blocking
			is.Dependencies.TotalBlockedBy++
			if open[e.blocking] {
				is.Dependencies.BlockedBy++
			}
		}
		if is := byID[e.blocking]; is != nil { // blocking e.issue
			is.Dependencies.TotalBlocking++
			if open[e.issue] {
				is.Dependencies.Blocking++
			}
		}
	}
	return nil
}

// dependencyIDs are the ids of the issues that block the issue (blocking
// false: that the issue blocks), oldest dependency first.
func dependencyIDs(ctx context.Context, q store.Q, issueID int64, blocking bool) ([]int64, error) {
	query := `SELECT blocking_id FROM issue_dependencies WHERE issue_id = $1 ORDER BY created_at, blocking_id`
	if blocking {
		query = `SELECT issue_id FROM issue_dependencies WHERE blocking_id = $1 ORDER BY created_at, issue_id`
	}
	rows, err := q.QueryContext(ctx, query, issueID)
	return store.ScanAll(rows, err, func(s store.Scanner) (int64, error) {
		var id int64
		return id, s.Scan(&id)
	})
}

// Linked is an issue on the other side of a dependency, with its
// repository.
type Linked struct {
	Issue *Issue
	Repo  *repos.Repository
}

// Dependencies are the issues that block the issue (blocking: that it
// blocks), each with its repository; the caller filters those it may not
// read.
func (s *Service) Dependencies(ctx context.Context, issueID int64, blocking bool) ([]Linked, error) {
	ids, err := dependencyIDs(ctx, s.DB, issueID, blocking)
	if err != nil {
		return nil, err
	}
	out := make([]Linked, 0, len(ids))
	for _, id := range ids {
		is, repo, err := s.IssueByID(ctx, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, Linked{Issue: is, Repo: repo})
	}
	return out, nil
}

// AddBlockedBy records that the repository's issue is blocked by the
// issue blocker (which the caller has checked it may read), and emits
// issue_dependencies blocked_by_added on the issue's repository and
// blocking_added on the blocker's. An issue cannot block itself, a
// dependency is recorded once, and an issue has at most MaxBlockedBy
// blockers: each a 422.
func (s *Service) AddBlockedBy(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, blocker Linked) (*Issue, error) {
	var out *Issue
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		is, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if is.ID == blocker.Issue.ID {
			return apierr.Custom("Issue", "issue_id", "An issue cannot be blocked by itself.")
		}
		// The checks below count the issue's blockers: two additions at
		// once would each count without the other's.
		if err := tx.LockKey(ctx, "issue dependencies "+strconv.FormatInt(is.ID, 10)); err != nil {
			return err
		}
		var n, dup int
		if err := tx.QueryRowContext(ctx, `SELECT count(*), COALESCE(sum(CASE WHEN blocking_id = $2 THEN 1 ELSE 0 END), 0)
			FROM issue_dependencies WHERE issue_id = $1`, is.ID, blocker.Issue.ID).Scan(&n, &dup); err != nil {
			return store.Normalize(err)
		}
		switch {
		case dup > 0:
			return apierr.Custom("Issue", "issue_id", "The dependency already exists.")
		case n >= MaxBlockedBy:
			return apierr.Custom("Issue", "issue_id", "An issue can be blocked by at most %d issues.", MaxBlockedBy)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO issue_dependencies (issue_id, blocking_id, created_at) VALUES ($1, $2, $3)`,
			is.ID, blocker.Issue.ID, tx.Now()); err != nil {
			return store.Normalize(err)
		}
		if out, err = issueByNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		return s.emitDependency(ctx, tx, actor, Linked{Issue: out, Repo: repo}, blocker, "added")
	})
	return out, err
}

// RemoveBlockedBy removes the dependency of the repository's issue on
// the issue of id blockerID, emitting blocked_by_removed and
// blocking_removed; a dependency that is not there is a 404.
func (s *Service) RemoveBlockedBy(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number, blockerID int64) (*Issue, error) {
	var out *Issue
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		is, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		res, err := tx.ExecContext(ctx, `DELETE FROM issue_dependencies WHERE issue_id = $1 AND blocking_id = $2`, is.ID, blockerID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			return errors.Join(err, store.ErrNotFound)
		}
		blocker, blockerRepo, err := s.issueByIDIn(ctx, tx, blockerID)
		if err != nil {
			return err
		}
		if out, err = issueByNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		return s.emitDependency(ctx, tx, actor, Linked{Issue: out, Repo: repo}, Linked{Issue: blocker, Repo: blockerRepo}, "removed")
	})
	return out, err
}

// issueByIDIn is IssueByID read through q (a transaction).
func (s *Service) issueByIDIn(ctx context.Context, q store.Q, id int64) (*Issue, *repos.Repository, error) {
	var repoID int64
	if err := q.QueryRowContext(ctx, `SELECT repository_id FROM issues WHERE id = $1`, id).Scan(&repoID); err != nil {
		return nil, nil, store.Normalize(err)
	}
	repo, err := repos.ByID(ctx, q, repoID)
	if err != nil {
		return nil, nil, err
	}
	is, err := scanIssue(q.QueryRowContext(ctx, `SELECT `+issueColumns+` FROM issues i WHERE i.id = $1`, id))
	if err != nil {
		return nil, nil, store.Normalize(err)
	}
	return is, repo, newLoader(q, repo).issues(ctx, []*Issue{is})
}

// emitDependency emits issue_dependencies blocked_by_<what> on the
// blocked issue's repository and blocking_<what> on the blocker's.
func (s *Service) emitDependency(ctx context.Context, tx *store.Tx, actor *accounts.Account, blocked, blocker Linked, what string) error {
	base := httpapi.BaseURL(ctx)
	payload := func(action string) map[string]any {
		return map[string]any{"action": action,
			"blocked_issue_id": blocked.Issue.ID, "blocked_issue": toIssueJSON(urlsOf(base, blocked.Repo), blocked.Issue),
			"blocking_issue_id": blocker.Issue.ID, "blocking_issue": toIssueJSON(urlsOf(base, blocker.Repo), blocker.Issue)}
	}
	if err := s.Events.Emit(ctx, tx, &events.Event{HookEvent: "issue_dependencies", HookPayload: payload("blocked_by_" + what),
		Actor: actor, Repo: blocked.Repo, Public: !blocked.Repo.Private}); err != nil {
		return err
	}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "issue_dependencies", HookPayload: payload("blocking_" + what),
		Actor: actor, Repo: blocker.Repo, Public: !blocker.Repo.Private})
}
