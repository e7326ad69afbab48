package checks

import (
	"context"

	"forgeapi/internal/store"
)

// The states of an Outcome.
const (
	OutcomePending = "pending"
	OutcomeSuccess = "success"
	OutcomeFailure = "failure"
)

// Outcome is the state of one required-check candidate of a commit: a
// check run (by its name, with its app) or a commit status context
// (AppID 0).
type Outcome struct {
	Name  string
	State string // OutcomePending, OutcomeSuccess or OutcomeFailure
	AppID int64  // 0 for a status
}

// Outcomes returns, for the repository's commit sha, the outcome of each
// check run name (the latest run of that name) and of each commit status
// context (its latest status), by name. A run succeeds with the
// conclusion success, neutral or skipped, fails with any other, and is
// pending until completed; a status is pending, success, or failure (for
// failure and error). When a name is both a check run and a status
// context, the check run's outcome is kept.
func Outcomes(ctx context.Context, q store.Q, repoID int64, sha string) (map[string]Outcome, error) {
	out := map[string]Outcome{}
	if err := statusOutcomes(ctx, q, repoID, sha, out); err != nil {
		return nil, err
	}
	rows, err := q.QueryContext(ctx, `SELECT r.name, r.app_id, r.status, r.conclusion FROM check_runs r
		WHERE r.repository_id = $1 AND r.head_sha = $2 AND r.latest = TRUE ORDER BY r.id`, repoID, sha)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		var o Outcome
		var status string
		var conclusion *string
		if err := rows.Scan(&o.Name, &o.AppID, &status, &conclusion); err != nil {
			return nil, store.Normalize(err)
		}
		o.State = runOutcome(status, conclusion)
		out[o.Name] = o // later runs replace earlier ones of the name
	}
	return out, store.Normalize(rows.Err())
}

// runOutcome is the outcome state of a run.
func runOutcome(status string, conclusion *string) string {
	if status != StatusCompleted || conclusion == nil {
		return OutcomePending
	}
	switch *conclusion {
	case ConclusionSuccess, ConclusionNeutral, ConclusionSkipped:
		return OutcomeSuccess
	}
	return OutcomeFailure
}

// statusOutcomes adds the latest status of each context of the commit.
func statusOutcomes(ctx context.Context, q store.Q, repoID int64, sha string, out map[string]Outcome) error {
	rows, err := q.QueryContext(ctx, `SELECT context, state FROM commit_statuses
		WHERE id IN (SELECT max(id) FROM commit_statuses WHERE repository_id = $1 AND sha = $2 GROUP BY lower(context))`,
		repoID, sha)
	if err != nil {
		return store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		var name, state string
		if err := rows.Scan(&name, &state); err != nil {
			return store.Normalize(err)
		}
		switch state {
		case "error", "failure":
			state = OutcomeFailure
		case "success":
			state = OutcomeSuccess
		default:
			state = OutcomePending
		}
		out[name] = Outcome{Name: name, State: state}
	}
	return store.Normalize(rows.Err())
}
