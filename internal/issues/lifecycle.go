package issues

import (
	"context"
	"errors"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// MaxPinned is how many issues a repository may pin, the platform's
// limit.
const MaxPinned = 3

// Pin is a pinned issue of a repository.
type Pin struct {
	ID       int64
	Issue    *Issue
	PinnedBy *accounts.Account // nil when the account is gone
	PinnedAt time.Time
}

// Pin pins (or, unpin, unpins) the repository's issue and emits issues
// pinned (unpinned) in the same transaction; nothing when it already is.
// A pull request cannot be pinned (store.ErrNotFound, as the platform
// finds no issue), a fourth pin is a 422. The caller checks push access.
func (s *Service) Pin(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, unpin bool) (*Issue, error) {
	var out *Issue
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		is, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if is.PullRequest {
			return store.ErrNotFound
		}
		out = is
		var pinned int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM issue_pins WHERE issue_id = $1`, is.ID).Scan(&pinned); err != nil {
			return store.Normalize(err)
		}
		if (pinned > 0) != unpin {
			return nil
		}
		if unpin {
			if _, err := tx.ExecContext(ctx, `DELETE FROM issue_pins WHERE issue_id = $1`, is.ID); err != nil {
				return store.Normalize(err)
			}
			return s.emitIssue(ctx, tx, repo, actor, "unpinned", is, nil)
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM issue_pins WHERE repository_id = $1`, repo.ID).Scan(&n); err != nil {
			return store.Normalize(err)
		}
		if n >= MaxPinned {
			return apierr.Custom("Issue", "pinned", "You can only pin %d issues in a repository.", MaxPinned)
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO issue_pins (issue_id, repository_id, pinned_by_id, pinned_at) VALUES ($1, $2, $3, $4)`,
			is.ID, repo.ID, actor.ID, tx.Now()); err != nil {
			return store.Normalize(err)
		}
		return s.emitIssue(ctx, tx, repo, actor, "pinned", is, nil)
	})
	return out, err
}

// Pins are the repository's pinned issues, first pinned first.
func (s *Service) Pins(ctx context.Context, repo *repos.Repository) ([]*Pin, error) {
	rows, err := s.DB.QueryContext(ctx, `SELECT p.id, i.number, p.pinned_by_id, p.pinned_at FROM issue_pins p
		JOIN issues i ON i.id = p.issue_id WHERE p.repository_id = $1 ORDER BY p.id`, repo.ID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	type row struct {
		id, number int64
		by         *int64
		at         time.Time
	}
	var list []row
	for rows.Next() {
		var r row
		if err := rows.Scan(&r.id, &r.number, &r.by, &r.at); err != nil {
			rows.Close()
			return nil, err
		}
		list = append(list, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	out := make([]*Pin, 0, len(list))
	for _, r := range list {
		is, err := issueByNumber(ctx, s.DB, repo, r.number)
		if err != nil {
			return nil, err
		}
		p := &Pin{ID: r.id, Issue: is, PinnedAt: r.at.UTC()}
		if r.by != nil {
			if p.PinnedBy, err = accounts.ByID(ctx, s.DB, *r.by); err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
		}
		out = append(out, p)
	}
	return out, nil
}

// PinByID is the pin of id with its repository; store.ErrNotFound when
// there is none.
func (s *Service) PinByID(ctx context.Context, id int64) (*Pin, *repos.Repository, error) {
	var issueID int64
	var by *int64
	var at time.Time
	err := s.DB.QueryRowContext(ctx, `SELECT issue_id, pinned_by_id, pinned_at FROM issue_pins WHERE id = $1`, id).Scan(&issueID, &by, &at)
	if err != nil {
		return nil, nil, store.Normalize(err)
	}
	is, repo, err := s.IssueByID(ctx, issueID)
	if err != nil {
		return nil, nil, err
	}
	p := &Pin{ID: id, Issue: is, PinnedAt: at.UTC()}
	if by != nil {
		if p.PinnedBy, err = accounts.ByID(ctx, s.DB, *by); err != nil && !errors.Is(err, store.ErrNotFound) {
			return nil, nil, err
		}
	}
	return p, repo, nil
}

// IsPinned reports whether the issue of id is pinned.
func (s *Service) IsPinned(ctx context.Context, issueID int64) (bool, error) {
	var n int
	err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM issue_pins WHERE issue_id = $1`, issueID).Scan(&n)
	return n > 0, store.Normalize(err)
}

// Delete deletes the repository's issue with its comments, reactions,
// history and pin, and emits issues deleted (the issue as it was) in the
// same transaction. A pull request cannot be deleted (store.ErrNotFound).
// The caller checks admin access, as the platform's deleteIssue.
func (s *Service) Delete(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		is, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if is.PullRequest {
			return store.ErrNotFound
		}
		if err := s.emitIssue(ctx, tx, repo, actor, "deleted", is, nil); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM reactions WHERE subject_type = $1 AND subject_id IN
			(SELECT id FROM issue_comments WHERE issue_id = $2)`, string(reactions.IssueComment), is.ID); err != nil {
			return store.Normalize(err)
		}
		if err := reactions.DeleteFor(ctx, tx, reactions.Issue, is.ID); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM issues WHERE id = $1`, is.ID)
		return store.Normalize(err)
	})
}

// Transfer moves the repository's issue to dest under dest's next
// number, as the platform's transferIssue: its comments, reactions and
// history go with it; labels and the milestone stay where dest has one of
// the same name (title), assignees where dest may assign them; a pin is
// dropped. The old number keeps pointing at it (TransferredTo). It emits
// issues transferred in the source repository (changes.new_issue and
// changes.new_repository) and issues opened in dest, in the same
// transaction. A pull request cannot be transferred (store.ErrNotFound);
// dest must belong to the same owner, and a private repository's issue
// cannot go to a public one (422). The caller checks push access to both.
func (s *Service) Transfer(ctx context.Context, repo, dest *repos.Repository, actor *accounts.Account, number int64) (*Issue, error) {
	if dest.ID == repo.ID {
		return s.Get(ctx, repo, number)
	}
	if dest.Owner.ID != repo.Owner.ID {
		return nil, apierr.Custom("Issue", "repository", "Issues can only be transferred between repositories of the same owner.")
	}
	if repo.Private && !dest.Private {
		return nil, apierr.Custom("Issue", "repository", "Issues of a private repository cannot be transferred to a public repository.")
	}
	var out *Issue
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		before, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if before.PullRequest {
			return store.ErrNotFound
		}
		n, err := nextNumber(ctx, tx, dest.ID, false)
		if err != nil {
			return err
		}
		if err := moveIssue(ctx, tx, before, dest, n); err != nil {
			return err
		}
		if out, err = issueByNumber(ctx, tx, dest, n); err != nil {
			return err
		}
		if err := keepAssignable(ctx, tx, dest, out); err != nil {
			return err
		}
		if out, err = issueByNumber(ctx, tx, dest, n); err != nil {
			return err
		}
		st, err := repos.StatsOf(ctx, tx, dest.ID)
		if err != nil {
			return err
		}
		base := httpapi.BaseURL(ctx)
		changes := map[string]any{"new_issue": toIssueJSON(urlsOf(base, dest), out),
			"new_repository": repos.ToJSON(repos.URLsOf(ctx), dest, st, auth.RoleNone)}
		if err := s.emitIssue(ctx, tx, repo, actor, "transferred", before, map[string]any{"changes": changes}); err != nil {
			return err
		}
		return s.emitIssue(ctx, tx, dest, actor, "opened", out, nil)
	})
	return out, err
}

// moveIssue gives the issue row the number n in dest, with what follows
// it: comments, history and reactions; labels and the milestone matched
// by name in dest; the redirect of its old place.
func moveIssue(ctx context.Context, tx *store.Tx, is *Issue, dest *repos.Repository, n int64) error {
	var milestone *int64
	if is.Milestone != nil {
		var id int64
		err := tx.QueryRowContext(ctx, `SELECT id FROM milestones WHERE repository_id = $1 AND title = $2`, dest.ID, is.Milestone.Title).Scan(&id)
		if err == nil {
			milestone = &id
		} else if err = store.Normalize(err); !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	names := make([]string, 0, len(is.Labels))
	for _, lb := range is.Labels {
		names = append(names, strings.ToLower(lb.Name))
	}
	for _, stmt := range []struct {
		query string
		args  []any
	}{
		{`INSERT INTO issue_transfers (repository_id, number, issue_id) VALUES ($1, $2, $3)`, []any{is.RepoID, is.Number, is.ID}},
		{`DELETE FROM issue_pins WHERE issue_id = $1`, []any{is.ID}},
		{`DELETE FROM issue_labels WHERE issue_id = $1`, []any{is.ID}},
		{`UPDATE issues SET repository_id = $1, number = $2, milestone_id = $3, updated_at = $4 WHERE id = $5`,
			[]any{dest.ID, n, milestone, tx.Now(), is.ID}},
		{`UPDATE issue_comments SET repository_id = $1 WHERE issue_id = $2`, []any{dest.ID, is.ID}},
		{`UPDATE issue_events SET repository_id = $1 WHERE issue_id = $2`, []any{dest.ID, is.ID}},
		{`UPDATE reactions SET repository_id = $1 WHERE subject_type = $2 AND subject_id = $3`, []any{dest.ID, string(reactions.Issue), is.ID}},
		{`UPDATE reactions SET repository_id = $1 WHERE subject_type = $2 AND subject_id IN
			(SELECT id FROM issue_comments WHERE issue_id = $3)`, []any{dest.ID, string(reactions.IssueComment), is.ID}},
	} {
		if _, err := tx.ExecContext(ctx, stmt.query, stmt.args...); err != nil {
			return store.Normalize(err)
		}
	}
	return keepLabels(ctx, tx, dest, is.ID, names)
}

// keepLabels gives the issue dest's labels of those names, leaving out
// the names dest has no label of (none is made).
func keepLabels(ctx context.Context, tx store.Q, dest *repos.Repository, issueID int64, names []string) error {
	for _, name := range names {
		lb, err := labelByName(ctx, tx, dest.ID, name)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO issue_labels (issue_id, label_id) VALUES ($1, $2)`, issueID, lb.ID); err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

// keepAssignable removes the issue's assignees that dest may not assign.
func keepAssignable(ctx context.Context, tx store.Q, dest *repos.Repository, is *Issue) error {
	for _, a := range is.Assignees {
		ok, err := assignable(ctx, tx, dest, a)
		if err != nil {
			return err
		}
		if !ok {
			if _, err := tx.ExecContext(ctx, `DELETE FROM issue_assignees WHERE issue_id = $1 AND user_id = $2`, is.ID, a.ID); err != nil {
				return store.Normalize(err)
			}
		}
	}
	return nil
}

// TransferredTo is the issue that had the number in the repository
// before a transfer, with the repository it is in now;
// store.ErrNotFound when none did.
func (s *Service) TransferredTo(ctx context.Context, repo *repos.Repository, number int64) (*Issue, *repos.Repository, error) {
	var id int64
	err := s.DB.QueryRowContext(ctx, `SELECT issue_id FROM issue_transfers WHERE repository_id = $1 AND number = $2`, repo.ID, number).Scan(&id)
	if err != nil {
		return nil, nil, store.Normalize(err)
	}
	return s.IssueByID(ctx, id)
}
