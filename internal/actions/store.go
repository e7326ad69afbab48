package actions

import (
	"context"
	"database/sql"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/store"
)

const workflowColumns = `id, repository_id, path, name, state, created_at, updated_at`

func scanWorkflow(row store.Scanner) (*Workflow, error) {
	var w Workflow
	err := row.Scan(&w.ID, &w.RepoID, &w.Path, &w.Name, &w.State, &w.CreatedAt, &w.UpdatedAt)
	return &w, store.Normalize(err)
}

// upsertWorkflow records the workflow file seen in a push (its name as
// parsed now) and returns it.
func upsertWorkflow(ctx context.Context, q store.Q, repoID int64, path, name string, now time.Time) (*Workflow, error) {
	return scanWorkflow(q.QueryRowContext(ctx, `INSERT INTO actions_workflows (repository_id, path, name, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $4)
		ON CONFLICT (repository_id, path) DO UPDATE SET name = excluded.name,
			updated_at = CASE WHEN actions_workflows.name = excluded.name THEN actions_workflows.updated_at ELSE excluded.updated_at END
		RETURNING `+workflowColumns, repoID, path, name, now))
}

// workflowByID returns the repository's workflow of the id.
func workflowByID(ctx context.Context, q store.Q, repoID, id int64) (*Workflow, error) {
	return scanWorkflow(q.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM actions_workflows
		WHERE id = $1 AND repository_id = $2`, id, repoID))
}

// workflowByRef returns the repository's workflow named by an id or a
// file name (ci.yml: the file under .github/workflows).
func workflowByRef(ctx context.Context, q store.Q, repoID int64, ref string) (*Workflow, error) {
	if id, err := strconv.ParseInt(ref, 10, 64); err == nil {
		return workflowByID(ctx, q, repoID, id)
	}
	return scanWorkflow(q.QueryRowContext(ctx, `SELECT `+workflowColumns+` FROM actions_workflows
		WHERE repository_id = $1 AND path = $2`, repoID, ".github/workflows/"+ref))
}

// listWorkflows returns a page of the repository's workflows and their
// count.
func listWorkflows(ctx context.Context, q store.Q, repoID int64, limit, offset int) ([]*Workflow, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM actions_workflows WHERE repository_id = $1`, repoID).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+workflowColumns+` FROM actions_workflows WHERE repository_id = $1
		ORDER BY id LIMIT $2 OFFSET $3`, repoID, limit, offset)
	list, err := store.ScanAll(rows, err, scanWorkflow)
	return list, total, err
}

// setWorkflowState enables or disables a workflow.
func setWorkflowState(ctx context.Context, q store.Q, id int64, state string, now time.Time) error {
	_, err := q.ExecContext(ctx, `UPDATE actions_workflows SET state = $1, updated_at = $2 WHERE id = $3`, state, now, id)
	return store.Normalize(err)
}

const runColumns = `r.id, r.repository_id, r.workflow_id, r.run_number, r.run_attempt, r.name, r.display_title, r.event,
	r.status, r.conclusion, r.head_sha, r.head_branch, r.actor_id, r.triggering_actor_id, r.workflow_file, r.event_payload,
	r.inputs, r.head_commit, r.error, r.run_started_at, r.created_at, r.updated_at, w.path, r.check_suite_id`

const runFrom = ` FROM actions_runs r JOIN actions_workflows w ON w.id = r.workflow_id`

func scanRun(row store.Scanner) (*Run, error) {
	var r Run
	var payload, inputs, head string
	err := row.Scan(&r.ID, &r.RepoID, &r.WorkflowID, &r.RunNumber, &r.RunAttempt, &r.Name, &r.DisplayTitle, &r.Event,
		&r.Status, &r.Conclusion, &r.HeadSHA, &r.HeadBranch, &r.ActorID, &r.TriggeringActorID, &r.WorkflowFile, &payload,
		&inputs, &head, &r.Error, &r.RunStartedAt, &r.CreatedAt, &r.UpdatedAt, &r.WorkflowPath, &r.CheckSuiteID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	r.EventPayload, r.HeadCommit = json.RawMessage(payload), json.RawMessage(head)
	_ = json.Unmarshal([]byte(inputs), &r.Inputs)
	return &r, nil
}

// insertRun stores a new run (its number the workflow's next) with its
// first attempt.
func insertRun(ctx context.Context, q store.Q, r *Run) error {
	inputs, err := json.Marshal(r.Inputs)
	if err != nil {
		return err
	}
	if r.Inputs == nil {
		inputs = []byte("{}")
	}
	err = q.QueryRowContext(ctx, `INSERT INTO actions_runs (repository_id, workflow_id, run_number, run_attempt, name,
		display_title, event, status, conclusion, head_sha, head_branch, actor_id, triggering_actor_id, workflow_file,
		event_payload, inputs, head_commit, error, run_started_at, created_at, updated_at)
		VALUES ($1, $2, (SELECT COALESCE(MAX(run_number), 0) + 1 FROM actions_runs WHERE workflow_id = $2), 1, $3,
			$4, $5, $6, $7, $8, $9, $10, $10, $11, $12, $13, $14, $15, $16, $16, $16)
		RETURNING id, run_number`, r.RepoID, r.WorkflowID, r.Name, r.DisplayTitle, r.Event, r.Status, r.Conclusion,
		r.HeadSHA, r.HeadBranch, r.ActorID, r.WorkflowFile, string(r.EventPayload), string(inputs), string(r.HeadCommit),
		r.Error, r.CreatedAt).Scan(&r.ID, &r.RunNumber)
	if err != nil {
		return store.Normalize(err)
	}
	r.RunAttempt, r.TriggeringActorID = 1, r.ActorID
	r.RunStartedAt, r.UpdatedAt = r.CreatedAt, r.CreatedAt
	return insertAttempt(ctx, q, r)
}

// insertAttempt stores the run's current attempt.
func insertAttempt(ctx context.Context, q store.Q, r *Run) error {
	_, err := q.ExecContext(ctx, `INSERT INTO actions_run_attempts (run_id, attempt, status, conclusion, triggering_actor_id,
		run_started_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
		r.ID, r.RunAttempt, r.Status, r.Conclusion, r.TriggeringActorID, r.RunStartedAt, r.UpdatedAt)
	return store.Normalize(err)
}

// runByID returns the repository's run of the id.
func runByID(ctx context.Context, q store.Q, repoID, id int64) (*Run, error) {
	return scanRun(q.QueryRowContext(ctx, `SELECT `+runColumns+runFrom+` WHERE r.id = $1 AND r.repository_id = $2`, id, repoID))
}

// attemptOf returns the run as it was at an earlier attempt: that
// attempt's status, conclusion, start and triggering actor.
func attemptOf(ctx context.Context, q store.Q, r *Run, attempt int) (*Run, error) {
	a := *r
	err := q.QueryRowContext(ctx, `SELECT attempt, status, conclusion, triggering_actor_id, run_started_at, updated_at
		FROM actions_run_attempts WHERE run_id = $1 AND attempt = $2`, r.ID, attempt).Scan(&a.RunAttempt, &a.Status,
		&a.Conclusion, &a.TriggeringActorID, &a.RunStartedAt, &a.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return &a, nil
}

// RunFilter narrows a list of runs (the platform's query parameters).
type RunFilter struct {
	WorkflowID   int64
	Actor        string
	Branch       string
	Event        string
	Status       string // a status or a conclusion
	HeadSHA      string
	CreatedFrom  *time.Time
	CreatedUntil *time.Time
}

// where is the filter's condition and arguments, numbered from $2 ($1 is
// the repository).
func (f RunFilter) where() (string, []any) {
	var conds []string
	var args []any
	add := func(cond string, v any) {
		args = append(args, v)
		conds = append(conds, strings.ReplaceAll(cond, "?", "$"+strconv.Itoa(len(args)+1)))
	}
	if f.WorkflowID != 0 {
		add("r.workflow_id = ?", f.WorkflowID)
	}
	if f.Actor != "" {
		add("r.actor_id = (SELECT id FROM accounts WHERE lower(login) = lower(?))", f.Actor)
	}
	if f.Branch != "" {
		add("r.head_branch = ?", f.Branch)
	}
	if f.Event != "" {
		add("r.event = ?", f.Event)
	}
	if f.HeadSHA != "" {
		add("r.head_sha = ?", f.HeadSHA)
	}
	switch f.Status {
	case "":
	case StatusQueued, StatusInProgress, StatusCompleted, StatusWaiting, "requested", "pending":
		add("r.status = ?", f.Status)
	default:
		add("r.conclusion = ?", f.Status)
	}
	if f.CreatedFrom != nil {
		add("r.created_at >= ?", *f.CreatedFrom)
	}
	if f.CreatedUntil != nil {
		add("r.created_at <= ?", *f.CreatedUntil)
	}
	if len(conds) == 0 {
		return "", nil
	}
	return " AND " + strings.Join(conds, " AND "), args
}

// listRuns returns a page of the repository's runs, newest first, and
// their count.
func listRuns(ctx context.Context, q store.Q, repoID int64, f RunFilter, limit, offset int) ([]*Run, int, error) {
	cond, args := f.where()
	args = append([]any{repoID}, args...)
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM actions_runs r WHERE r.repository_id = $1`+cond, args...).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	n := len(args)
	rows, err := q.QueryContext(ctx, `SELECT `+runColumns+runFrom+` WHERE r.repository_id = $1`+cond+
		` ORDER BY r.id DESC LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2), append(args, limit, offset)...)
	list, err := store.ScanAll(rows, err, scanRun)
	return list, total, err
}

// setRunState stores the run's (and its current attempt's) status and
// conclusion.
func setRunState(ctx context.Context, q store.Q, r *Run, now time.Time) error {
	r.UpdatedAt = now
	if _, err := q.ExecContext(ctx, `UPDATE actions_runs SET status = $1, conclusion = $2, updated_at = $3 WHERE id = $4`,
		r.Status, r.Conclusion, now, r.ID); err != nil {
		return store.Normalize(err)
	}
	_, err := q.ExecContext(ctx, `UPDATE actions_run_attempts SET status = $1, conclusion = $2, updated_at = $3
		WHERE run_id = $4 AND attempt = $5`, r.Status, r.Conclusion, now, r.ID, r.RunAttempt)
	return store.Normalize(err)
}

// startAttempt makes the run's next attempt current.
func startAttempt(ctx context.Context, q store.Q, r *Run, actorID int64, now time.Time) error {
	r.RunAttempt++
	r.Status, r.Conclusion, r.TriggeringActorID, r.RunStartedAt, r.UpdatedAt = StatusQueued, nil, &actorID, now, now
	if _, err := q.ExecContext(ctx, `UPDATE actions_runs SET run_attempt = $1, status = $2, conclusion = NULL,
		triggering_actor_id = $3, run_started_at = $4, updated_at = $4 WHERE id = $5`,
		r.RunAttempt, r.Status, actorID, now, r.ID); err != nil {
		return store.Normalize(err)
	}
	return insertAttempt(ctx, q, r)
}

const jobColumns = `id, run_id, repository_id, run_attempt, job_key, name, matrix, needs, labels, steps, outputs, status,
	conclusion, started_at, completed_at, created_at, runner_name, has_log, check_run_id, environment, deployment_id,
	workflow_file, runner_id, runner_group_id, runner_group_name, runner_started, call_chain`

func scanJob(row store.Scanner) (*Job, error) {
	var j Job
	var matrix, needs, labels, steps, outputs, chain string
	var started, completed sql.NullTime
	err := row.Scan(&j.ID, &j.RunID, &j.RepoID, &j.RunAttempt, &j.Key, &j.Name, &matrix, &needs, &labels, &steps, &outputs,
		&j.Status, &j.Conclusion, &started, &completed, &j.CreatedAt, &j.RunnerName, &j.HasLog, &j.CheckRunID,
		&j.Environment, &j.DeploymentID, &j.WorkflowFile, &j.RunnerID, &j.RunnerGroupID, &j.RunnerGroupName, &j.RunnerStarted, &chain)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if started.Valid {
		j.StartedAt = &started.Time
	}
	if completed.Valid {
		j.CompletedAt = &completed.Time
	}
	_ = json.Unmarshal([]byte(matrix), &j.Matrix)
	_ = json.Unmarshal([]byte(needs), &j.Needs)
	_ = json.Unmarshal([]byte(labels), &j.Labels)
	_ = json.Unmarshal([]byte(steps), &j.Steps)
	_ = json.Unmarshal([]byte(outputs), &j.Outputs)
	if chain != "" {
		_ = json.Unmarshal([]byte(chain), &j.Callers)
	}
	return &j, nil
}

// insertJob stores a job of a run attempt.
func insertJob(ctx context.Context, q store.Q, j *Job) error {
	matrix, _ := json.Marshal(j.Matrix)
	needs, _ := json.Marshal(orEmpty(j.Needs))
	labels, _ := json.Marshal(orEmpty(j.Labels))
	steps, _ := json.Marshal(j.stepsOrEmpty())
	outputs, _ := json.Marshal(j.outputsOrEmpty())
	chain := ""
	if len(j.Callers) > 0 {
		b, _ := json.Marshal(j.Callers)
		chain = string(b)
	}
	err := q.QueryRowContext(ctx, `INSERT INTO actions_jobs (run_id, repository_id, run_attempt, job_key, name, matrix, needs,
		labels, steps, outputs, status, conclusion, started_at, completed_at, created_at, check_run_id, environment, workflow_file,
		call_chain) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19) RETURNING id`,
		j.RunID, j.RepoID, j.RunAttempt, j.Key, j.Name, string(matrix), string(needs), string(labels), string(steps),
		string(outputs), j.Status, j.Conclusion, j.StartedAt, j.CompletedAt, j.CreatedAt, j.CheckRunID, j.Environment,
		j.WorkflowFile, chain).Scan(&j.ID)
	return store.Normalize(err)
}

func orEmpty(l []string) []string {
	if l == nil {
		return []string{}
	}
	return l
}

func (j *Job) stepsOrEmpty() []Step {
	if j.Steps == nil {
		return []Step{}
	}
	return j.Steps
}

func (j *Job) outputsOrEmpty() map[string]string {
	if j.Outputs == nil {
		return map[string]string{}
	}
	return j.Outputs
}

// saveJob stores the job's state, steps and outputs.
func saveJob(ctx context.Context, q store.Q, j *Job) error {
	steps, _ := json.Marshal(j.stepsOrEmpty())
	outputs, _ := json.Marshal(j.outputsOrEmpty())
	_, err := q.ExecContext(ctx, `UPDATE actions_jobs SET status = $1, conclusion = $2, started_at = $3, completed_at = $4,
		steps = $5, outputs = $6, runner_name = $7, has_log = $8 WHERE id = $9`, j.Status, j.Conclusion, j.StartedAt,
		j.CompletedAt, string(steps), string(outputs), j.RunnerName, j.HasLog, j.ID)
	return store.Normalize(err)
}

// jobByID returns the repository's job of the id.
func jobByID(ctx context.Context, q store.Q, repoID, id int64) (*Job, error) {
	return scanJob(q.QueryRowContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE id = $1 AND repository_id = $2`, id, repoID))
}

// jobsOf returns the jobs of a run attempt in their order.
func jobsOf(ctx context.Context, q store.Q, runID int64, attempt int) ([]*Job, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE run_id = $1 AND run_attempt = $2 ORDER BY id`,
		runID, attempt)
	return store.ScanAll(rows, err, scanJob)
}

// allJobsOf returns the jobs of every attempt of a run.
func allJobsOf(ctx context.Context, q store.Q, runID int64) ([]*Job, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE run_id = $1 ORDER BY id`, runID)
	return store.ScanAll(rows, err, scanJob)
}
