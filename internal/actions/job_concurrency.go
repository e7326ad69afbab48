package actions

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Job-level `concurrency`, as the platform runs it: a job belongs to its
// group (evaluated when the job is queued, with the github fields the
// workflow-level key reads, and matrix.* and inputs.*); a newly queued
// job of a group cancels the group's older jobs that have not started
// (and, with cancel-in-progress: true, those in progress: their steps are
// stopped), in any run of the repository; a job is not claimed while an
// older job of its group is not completed, so one job of a group runs at
// a time.

// joinJobGroup puts the queued job in its group and cancels the group's
// older jobs as its cancel-in-progress says; vars are the run's github
// fields (runVars).
func (s *Service) joinJobGroup(ctx context.Context, tx *store.Tx, j *Job, c engine.Concurrency, vars map[string]string) error {
	if c.Group == "" || j.Status != StatusQueued {
		return nil
	}
	scoped := make(map[string]string, len(vars)+len(j.Matrix))
	for k, v := range vars {
		scoped[k] = v
	}
	for k, v := range j.Matrix {
		scoped["matrix."+k] = fmt.Sprint(v)
	}
	group := evalGroup(c.Group, scoped)
	if group == "" {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `UPDATE actions_jobs SET concurrency_group = $1 WHERE id = $2`, group, j.ID); err != nil {
		return store.Normalize(err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE repository_id = $1
		AND concurrency_group = $2 AND id < $3 AND status <> 'completed' ORDER BY id`, j.RepoID, group, j.ID)
	older, err := store.ScanAll(rows, err, scanJob)
	if err != nil {
		return err
	}
	message := "Canceling since a higher priority waiting request for '" + group + "' exists"
	var stop []int64
	for _, o := range older {
		switch {
		case o.Status == StatusInProgress && c.CancelInProgress:
			if _, err := tx.ExecContext(ctx, `UPDATE actions_jobs SET cancel_requested = TRUE WHERE id = $1`, o.ID); err != nil {
				return store.Normalize(err)
			}
			stop = append(stop, o.ID)
		case o.Status == StatusQueued || o.Status == StatusWaiting:
			if err := s.completeJob(ctx, tx, o, Cancelled, message); err != nil {
				return err
			}
		}
	}
	if len(stop) > 0 {
		tx.AfterCommit(func() { s.running.cancel(stop) })
	}
	return nil
}

// jobGroupBlocked reports whether an older job of the job's concurrency
// group is not completed (the job waits).
func jobGroupBlocked(ctx context.Context, tx *store.Tx, j *Job) (bool, error) {
	var n int
	err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM actions_jobs o JOIN actions_jobs j ON j.id = $1
		WHERE j.concurrency_group <> '' AND o.repository_id = j.repository_id AND o.concurrency_group = j.concurrency_group
		AND o.id < j.id AND o.status <> 'completed'`, j.ID).Scan(&n)
	return n > 0, store.Normalize(err)
}

// runVars are the fields of the github context (and inputs.*) a
// concurrency group of the run's jobs may read: those joinGroup reads
// from the trigger, read back from the stored run.
func runVars(ctx context.Context, q store.Q, r *Run) (map[string]string, error) {
	repo, err := repos.ByID(ctx, q, r.RepoID)
	if err != nil {
		return nil, err
	}
	var payload struct {
		Ref         string `json:"ref"`
		Number      int64  `json:"number"`
		PullRequest *struct {
			Head struct{ Ref string } `json:"head"`
			Base struct{ Ref string } `json:"base"`
		} `json:"pull_request"`
	}
	_ = json.Unmarshal(r.EventPayload, &payload)
	vars := map[string]string{"workflow": r.Name, "event_name": r.Event, "sha": r.HeadSHA, "repository": repo.FullName(),
		"repository_owner": repo.Owner.Login, "run_id": itoa(r.ID), "ref": payload.Ref}
	switch {
	case r.Event == "pull_request" && payload.PullRequest != nil:
		vars["ref"] = "refs/pull/" + itoa(payload.Number) + "/merge"
		vars["head_ref"], vars["base_ref"] = payload.PullRequest.Head.Ref, payload.PullRequest.Base.Ref
	case !strings.HasPrefix(vars["ref"], "refs/") && r.HeadBranch != nil:
		vars["ref"] = "refs/heads/" + *r.HeadBranch
	}
	vars["ref_name"] = strings.TrimPrefix(strings.TrimPrefix(vars["ref"], "refs/heads/"), "refs/tags/")
	if actor, err := actorOf(ctx, q, r.TriggeringActorID); err == nil && actor != nil {
		vars["actor"] = actor.Login
	}
	for k, v := range r.Inputs {
		vars["inputs."+k] = v
	}
	return vars, nil
}
