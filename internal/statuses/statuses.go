// Package statuses serves commit statuses: the states (error, failure,
// pending, success) that CI and other systems post on a commit under a
// context, each commit's list of them, and its combined status (the latest
// state of each context). Posting one sends the status webhook event in
// the same transaction.
package statuses

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The states of a status.
const (
	StateError   = "error"
	StateFailure = "failure"
	StatePending = "pending"
	StateSuccess = "success"
)

// Limits of a status, in characters for the strings. The count per
// context (documented) and the context and description lengths are the
// platform's: it answers a longer description with "description is too
// long (maximum is 140 characters)", the apierr.TooLong entry. The
// platform states no target_url limit; 2048 is forgeapi's.
const (
	MaxPerContext      = 1000 // statuses of one commit and context
	MaxContextLength   = 255
	MaxDescriptionLen  = 140
	MaxTargetURLLength = 2048
)

// Status is one posted status.
type Status struct {
	ID          int64
	SHA         string
	State       string
	Context     string
	Description string
	TargetURL   string
	Creator     *accounts.Account // nil once the account is gone
	CreatedAt   time.Time
}

// Service stores statuses and emits their events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
}

// Create stores a status of the commit sha (which the caller has
// resolved in the repository) and emits the status event, whose fields
// payload fills (the commit and branches). More than MaxPerContext
// statuses for one commit and context is a 422.
func (s *Service) Create(ctx context.Context, repo *repos.Repository, actor *accounts.Account, st Status, payload func(*Status) map[string]any) (*Status, error) {
	st.Creator, st.CreatedAt = actor, store.Now()
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM commit_statuses WHERE repository_id = $1 AND sha = $2 AND lower(context) = lower($3)`,
			repo.ID, st.SHA, st.Context).Scan(&n); err != nil {
			return err
		}
		if n >= MaxPerContext {
			return apierr.Custom("Status", "context", "This SHA and context has reached the maximum number of statuses (%d).", MaxPerContext)
		}
		err := tx.QueryRowContext(ctx, `INSERT INTO commit_statuses (repository_id, sha, state, context, description, target_url, creator_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8) RETURNING id`,
			repo.ID, st.SHA, st.State, st.Context, st.Description, st.TargetURL, actor.ID, st.CreatedAt).Scan(&st.ID)
		if err != nil {
			return store.Normalize(err)
		}
		return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "status", HookPayload: payload(&st),
			Actor: actor, Repo: repo, Public: !repo.Private, CreatedAt: st.CreatedAt})
	})
	if err != nil {
		return nil, err
	}
	return &st, nil
}

// List returns a page of the commit's statuses, newest first, and how
// many there are.
func (s *Service) List(ctx context.Context, repoID int64, sha string, limit, offset int) ([]*Status, int, error) {
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM commit_statuses WHERE repository_id = $1 AND sha = $2`, repoID, sha).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	list, err := s.query(ctx, `SELECT `+statusColumns+` FROM commit_statuses
		WHERE repository_id = $1 AND sha = $2 ORDER BY id DESC LIMIT $3 OFFSET $4`, repoID, sha, limit, offset)
	return list, total, err
}

// Latest returns the latest status of each context of the commit, by
// context.
func (s *Service) Latest(ctx context.Context, repoID int64, sha string) ([]*Status, error) {
	return s.query(ctx, `SELECT `+statusColumns+` FROM commit_statuses
		WHERE id IN (SELECT max(id) FROM commit_statuses WHERE repository_id = $1 AND sha = $2 GROUP BY lower(context))
		ORDER BY lower(context)`, repoID, sha)
}

// Combined is the state of a set of latest statuses: failure when any is
// an error or a failure, pending when there is none or any is pending,
// success otherwise.
func Combined(latest []*Status) string {
	state := StateSuccess
	if len(latest) == 0 {
		return StatePending
	}
	for _, st := range latest {
		switch st.State {
		case StateError, StateFailure:
			return StateFailure
		case StatePending:
			state = StatePending
		}
	}
	return state
}

// statusColumns are the columns query scans.
const statusColumns = `id, sha, state, context, description, target_url, created_at, creator_id`

// query runs a query of statusColumns and loads each status's creator.
func (s *Service) query(ctx context.Context, query string, args ...any) ([]*Status, error) {
	rows, err := s.DB.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	out := []*Status{}
	var creators []*int64
	for rows.Next() {
		st := &Status{}
		var creator *int64
		if err := rows.Scan(&st.ID, &st.SHA, &st.State, &st.Context, &st.Description, &st.TargetURL, &st.CreatedAt, &creator); err != nil {
			rows.Close()
			return nil, store.Normalize(err)
		}
		out, creators = append(out, st), append(creators, creator)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	known := map[int64]*accounts.Account{}
	for i, id := range creators {
		if id == nil {
			continue
		}
		if known[*id] == nil {
			a, err := accounts.ByID(ctx, s.DB, *id)
			if err != nil && !errors.Is(err, store.ErrNotFound) {
				return nil, err
			}
			known[*id] = a
		}
		out[i].Creator = known[*id]
	}
	return out, nil
}
