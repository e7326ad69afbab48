package actions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The one claim path of jobs, shared by the built-in runner (runner.go)
// and the registered runners (remote.go): a claimant leases a queued
// job, renews the lease while the job runs, marks it started, records
// its steps, log and result; a job whose lease ran out is queued again
// when its runner never started it, failed otherwise (failLost).

// defaultLease is a claimed job's lease without Service.Lease.
const defaultLease = 30 * time.Second

// lease is the service's job lease.
func (s *Service) lease() time.Duration {
	if s.Lease > 0 {
		return s.Lease
	}
	return defaultLease
}

// claimant is who claims jobs: the built-in runner (runner nil) or a
// registered runner.
type claimant struct {
	owner  string // the lease owner written on the job
	name   string // the runner's name shown on the job
	lease  time.Duration
	runner *RemoteRunner
}

// where is the SQL condition (after the status and cursor, numbered from
// $3) of the jobs the claimant may take: the built-in runner the jobs
// that do not ask for self-hosted, a registered runner its repository's
// jobs, its organization's repositories' jobs or its enterprise's
// organizations' repositories' jobs.
func (c claimant) where() (string, []any) {
	switch {
	case c.runner == nil:
		return ` AND lower(labels) NOT LIKE '%"self-hosted"%'`, nil
	case c.runner.RepoID != 0:
		return ` AND repository_id = $3`, []any{c.runner.RepoID}
	case c.runner.EnterpriseID != 0:
		return ` AND repository_id IN (SELECT r.id FROM repositories r JOIN enterprise_orgs e ON e.org_id = r.owner_id
			WHERE e.enterprise_id = $3)`, []any{c.runner.EnterpriseID}
	default:
		return ` AND repository_id IN (SELECT id FROM repositories WHERE owner_id = $3)`, []any{c.runner.OrgID}
	}
}

// accepts reports whether the claimant takes the job: a registered
// runner the jobs whose runs-on labels are all its own (in any case), of
// a repository its group serves.
func (c claimant) accepts(j *Job) bool {
	if c.runner == nil {
		return true
	}
	return c.runner.serves(j.RepoID) && labelsMatch(j.Labels, c.runner.Labels)
}

// labelsMatch reports whether have holds every one of want (at least
// one), in any case.
func labelsMatch(want, have []string) bool {
	if len(want) == 0 {
		return false
	}
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || strings.EqualFold(w, h)
		}
		if !found {
			return false
		}
	}
	return true
}

// claimTries bounds how many jobs one claim tries (each a transaction
// that may find the job not ready); the jobs its labels refuse are not
// counted.
const claimTries = 50

// claimNext takes the oldest queued job the claimant accepts whose needs
// are completed (then the waiting jobs whose environment's gate opened):
// false when there is none.
func (s *Service) claimNext(ctx context.Context, c claimant) (*Job, bool, error) {
	cond, extra := c.where()
	tries := 0
	for _, status := range []string{StatusQueued, StatusWaiting} {
		for after := int64(0); ; {
			args := append([]any{status, after}, extra...)
			rows, err := s.DB.QueryContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE status = $1 AND id > $2`+cond+
				` ORDER BY id LIMIT 100`, args...)
			page, err := store.ScanAll(rows, err, scanJob)
			if err != nil {
				return nil, false, err
			}
			for _, j := range page {
				after = j.ID
				if !c.accepts(j) {
					continue
				}
				claimed, err := s.claimJob(ctx, c, j)
				if err != nil || claimed {
					return j, claimed, err
				}
				if tries++; tries == claimTries {
					return nil, false, nil
				}
			}
			if len(page) < 100 {
				break
			}
		}
	}
	return nil, false, nil
}

// claimJob leases the job to the claimant when its needs are done, no
// older run or job of its concurrency group holds it and its
// environment's gate is open; false when not, or another runner took it.
func (s *Service) claimJob(ctx context.Context, c claimant, j *Job) (bool, error) {
	if ok, err := s.selfHostedAllowed(ctx, c, j); err != nil || !ok {
		return false, err // the organization does not let the repository use its self-hosted runners
	}
	claimed := false
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := runOf(ctx, tx, j)
		if err != nil {
			return err
		}
		if ok, err := s.groupRunsWorkflow(ctx, tx, c, r); err != nil || !ok {
			return err // the runner's group is restricted to other workflows
		}
		ready, err := s.needsDone(ctx, tx, r, j)
		if err != nil || !ready {
			return err
		}
		if blocked, err := concurrencyBlocked(ctx, tx, r); err != nil || blocked {
			return err // an older run of its concurrency group is not done
		}
		if blocked, err := jobGroupBlocked(ctx, tx, j); err != nil || blocked {
			return err // an older job of its concurrency group is not done
		}
		if held, err := s.held(ctx, tx, r, j); err != nil || held {
			return err // its environment's protection holds it (gates.go)
		}
		now := tx.Now()
		var runnerID, groupID *int64
		var groupName *string
		if c.runner != nil {
			runnerID = &c.runner.ID
			if c.runner.GroupID != 0 {
				groupID, groupName = &c.runner.GroupID, &c.runner.GroupName
			}
		}
		once := c.runner != nil && c.runner.Ephemeral // an ephemeral runner takes one job
		n, err := store.Affected(tx.ExecContext(ctx, `UPDATE actions_jobs SET status = 'in_progress', started_at = $1,
			lease_owner = $2, lease_until = $3, runner_name = $4, runner_id = $5, runner_group_id = $6, runner_group_name = $7,
			runner_started = FALSE WHERE id = $8 AND status IN ('queued', 'waiting')
			AND NOT ($9 AND EXISTS (SELECT 1 FROM actions_jobs o WHERE o.runner_id = $5))`,
			now, c.owner, now.Add(c.lease), c.name, runnerID, groupID, groupName, j.ID, once))
		if err != nil || n == 0 {
			return err
		}
		claimed = true
		j.Status, j.StartedAt, j.RunnerName = StatusInProgress, &now, &c.name
		j.RunnerID, j.RunnerGroupID, j.RunnerGroupName = runnerID, groupID, groupName
		if err := s.emitJob(ctx, tx, "in_progress", r, j, nil); err != nil {
			return err
		}
		if r.Status == StatusQueued || r.Status == StatusWaiting {
			r.Status = StatusInProgress
			if err := setRunState(ctx, tx, r, now); err != nil {
				return err
			}
			return s.emitRun(ctx, tx, "in_progress", r, nil)
		}
		return nil
	})
	return claimed, err
}

// groupRunsWorkflow reports whether the claimant may run the run's jobs:
// a registered runner whose group is restricted to selected workflows
// only those.
func (s *Service) groupRunsWorkflow(ctx context.Context, q store.Q, c claimant, r *Run) (bool, error) {
	if c.runner == nil || c.runner.Workflows == nil {
		return true, nil
	}
	var repo string
	err := q.QueryRowContext(ctx, `SELECT a.login || '/' || r.name FROM repositories r JOIN accounts a ON a.id = r.owner_id
		WHERE r.id = $1`, r.RepoID).Scan(&repo)
	if err != nil {
		return false, store.Normalize(err)
	}
	return c.runner.runsWorkflow(repo, r), nil
}

// selfHostedAllowed reports whether the claimant may take the job: the
// built-in runner always, a registered runner when the job's
// repository may use self-hosted runners (RunSettings).
func (s *Service) selfHostedAllowed(ctx context.Context, c claimant, j *Job) (bool, error) {
	if c.runner == nil || s.Settings == nil {
		return true, nil
	}
	return s.Settings.SelfHostedAllowed(ctx, j.RepoID)
}

// renewLease extends the lease of the owner's job; false when the lease
// was lost (the job was failed or queued again) or its cancel was asked.
func (s *Service) renewLease(ctx context.Context, jobID int64, owner string, lease time.Duration) (bool, error) {
	n, err := store.Affected(s.DB.ExecContext(ctx, `UPDATE actions_jobs SET lease_until = $1
		WHERE id = $2 AND lease_owner = $3 AND status = 'in_progress' AND NOT cancel_requested`, store.Now().Add(lease), jobID, owner))
	return n > 0, err
}

// markStarted records that the owner's job is starting (from now on a
// lost lease fails it rather than queue it again); false when its lease
// ran out or was lost, and the job must not run.
func (s *Service) markStarted(ctx context.Context, jobID int64, owner string) (bool, error) {
	n, err := store.Affected(s.DB.ExecContext(ctx, `UPDATE actions_jobs SET runner_started = TRUE
		WHERE id = $1 AND lease_owner = $2 AND status = 'in_progress' AND lease_until > $3`, jobID, owner, store.Now()))
	return n > 0, err
}

// holds reports whether the owner holds the job's lease.
func (s *Service) holds(ctx context.Context, jobID int64, owner string) (bool, error) {
	var n int
	err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM actions_jobs WHERE id = $1 AND lease_owner = $2
		AND status = 'in_progress'`, jobID, owner).Scan(&n)
	return n > 0, store.Normalize(err)
}

// prepare is the engine's input of a claimed job, but its work tree,
// scratch directory, log and step callback: its workflow, contexts,
// secrets and variables, its GITHUB_TOKEN and runtime token (revoked by
// revokeJobTokens), after its environment admitted it. A refusal is the
// message the job fails with.
func (s *Service) prepare(ctx context.Context, r *Run, j *Job) (spec engine.Spec, refusal string, err error) {
	if spec, err = s.jobSpec(ctx, r, j); err != nil {
		return spec, "The job could not start: " + err.Error(), nil
	}
	if refusal, err := s.admit(ctx, r, j); err != nil || refusal != "" {
		if err != nil {
			refusal = "The job could not start: " + err.Error()
		}
		return spec, refusal, nil
	}
	if err := s.withToken(ctx, &spec, r, j); err != nil {
		return spec, "The job could not start: " + err.Error(), nil
	}
	if err := s.withRuntime(ctx, spec.Env, r, j); err != nil {
		return spec, "The job could not start: " + err.Error(), nil
	}
	if err := s.withIDToken(ctx, spec.Env, r, j); err != nil {
		return spec, "The job could not start: " + err.Error(), nil
	}
	spec.Masks = append(spec.Masks, spec.Env["ACTIONS_RUNTIME_TOKEN"]) // as the platform's runner masks it
	return spec, "", nil
}

// jobSpec is the engine's input of the job read from its run: workflow,
// job, matrix, event, inputs, needs, actor, secrets and variables.
func (s *Service) jobSpec(ctx context.Context, r *Run, j *Job) (engine.Spec, error) {
	needs, err := s.needResults(ctx, r, j)
	if err != nil {
		return engine.Spec{}, err
	}
	repo, err := repos.ByID(ctx, s.DB, r.RepoID)
	if err != nil {
		return engine.Spec{}, err
	}
	spec := engine.Spec{Workflow: []byte(r.WorkflowFile), JobKey: j.Key, Matrix: j.Matrix,
		Event: r.Event, EventPayload: r.EventPayload, Inputs: r.Inputs,
		Env: map[string]string{"GITHUB_REPOSITORY": repo.FullName(), "GITHUB_SERVER_URL": s.BaseURL,
			"GITHUB_API_URL": trimSlash(s.BaseURL) + "/api/v3", "GITHUB_GRAPHQL_URL": trimSlash(s.BaseURL) + "/api/graphql",
			"GITHUB_RUN_ID": itoa(r.ID), "GITHUB_RUN_NUMBER": itoa(r.RunNumber), "GITHUB_RUN_ATTEMPT": itoa(int64(r.RunAttempt))}}
	callSpec(&spec, r, j, needs) // the job's needs, or a called job's and its caller's
	if actor, err := actorOf(ctx, s.DB, r.TriggeringActorID); err == nil && actor != nil {
		spec.Actor = actor.Login
	}
	if s.Values != nil {
		if spec.Secrets, spec.Vars, err = s.Values.RunValues(ctx, r.RepoID, j.Environment); err != nil {
			return engine.Spec{}, err
		}
	}
	return spec, nil
}

// withToken gives the job its GITHUB_TOKEN, with the job's permissions,
// and keeps its id on the job for revokeJobTokens.
func (s *Service) withToken(ctx context.Context, spec *engine.Spec, r *Run, j *Job) error {
	repo, err := repos.ByID(ctx, s.DB, r.RepoID)
	if err != nil {
		return err
	}
	grant, err := s.jobGrant(ctx, r, j.Key)
	if _, _, called := callOf(j.Key); called {
		grant, err = s.calledJobGrant(ctx, r, j) // its caller's, narrowed by the called workflows'
	}
	if err != nil {
		return err
	}
	if grant, err = s.forkLimits(ctx, r, spec, grant); err != nil {
		return err
	}
	token, id, err := s.jobToken(ctx, repo, grant)
	if err != nil {
		return err
	}
	if _, err := s.DB.ExecContext(ctx, `UPDATE actions_jobs SET token_id = $1 WHERE id = $2`, id, j.ID); err != nil {
		_ = auth.RevokeToken(context.WithoutCancel(ctx), s.DB, id)
		return store.Normalize(err)
	}
	spec.Token = token
	return nil
}

// revokeJobTokens deletes the job's GITHUB_TOKEN and runtime token (the
// tokens end with the job, before it is seen completed), once: the
// token's id is taken off the job first (SQLite hands the id of a
// deleted last row out again, so a second delete could take another
// job's new token).
func (s *Service) revokeJobTokens(ctx context.Context, jobID int64) error {
	ctx = context.WithoutCancel(ctx)
	var id sql.NullInt64
	if err := s.DB.QueryRowContext(ctx, `SELECT token_id FROM actions_jobs WHERE id = $1`, jobID).Scan(&id); err != nil {
		return store.Normalize(err)
	}
	if id.Valid {
		n, err := store.Affected(s.DB.ExecContext(ctx, `UPDATE actions_jobs SET token_id = NULL WHERE id = $1 AND token_id = $2`,
			jobID, id.Int64))
		if err != nil {
			return err
		}
		if n > 0 {
			if err := auth.RevokeToken(ctx, s.DB, id.Int64); err != nil && !errors.Is(err, store.ErrNotFound) {
				return err
			}
		}
	}
	_, err := s.DB.ExecContext(ctx, `DELETE FROM actions_runtime_tokens WHERE job_id = $1`, jobID)
	return store.Normalize(err)
}

// saveLog stores the job's log (nil: none kept when there are no blobs).
func (s *Service) saveLog(ctx context.Context, j *Job, log io.Reader) error {
	if s.Blobs == nil {
		return nil
	}
	if _, err := s.Blobs.Put(ctx, jobLogKey(j.ID), log); err != nil {
		return err
	}
	j.HasLog = true
	return nil
}

// complete records the owner's job's result (its steps, outputs and
// conclusion, cancelled when its cancel was asked) unless the lease was
// lost: then the job was failed or queued again already, and false is
// returned. The job's deployment (if any) is told first.
func (s *Service) complete(ctx context.Context, owner string, r *Run, j *Job, res engine.Result) (bool, error) {
	if err := s.finished(ctx, r, j, res.Conclusion); err != nil { // before the job is seen completed
		return false, fmt.Errorf("record the job's deployment: %w", err)
	}
	for _, st := range res.Steps {
		applyStep(j, st)
	}
	for i := range j.Steps {
		if j.Steps[i].Status != StatusCompleted { // steps that never ran
			skipped := Skipped
			j.Steps[i].Status, j.Steps[i].Conclusion = StatusCompleted, &skipped
		}
	}
	j.Outputs = res.Outputs
	done, before := false, *j
	err := s.DB.RetryTx(ctx, func(tx *store.Tx) error { // run again as a deadlock's victim
		done, *j = false, before // what a rolled-back try set (its check run's id) is gone
		var cancel bool
		n, err := store.Affected(tx.ExecContext(ctx, `UPDATE actions_jobs SET lease_owner = '', lease_until = NULL
			WHERE id = $1 AND lease_owner = $2 AND status = 'in_progress'`, j.ID, owner))
		if err != nil || n == 0 {
			return err // the lease was lost: the job was failed as lost
		}
		if err := tx.QueryRowContext(ctx, `SELECT cancel_requested FROM actions_jobs WHERE id = $1`, j.ID).Scan(&cancel); err != nil {
			return err
		}
		conclusion := res.Conclusion
		if cancel {
			conclusion = Cancelled
		}
		done = true
		if j.CheckRunID != nil { // before check_run completed goes out
			if err := annotate(ctx, tx, *j.CheckRunID, res.Annotations); err != nil {
				return err
			}
		}
		had := j.CheckRunID != nil
		if err := s.completeJob(ctx, tx, j, conclusion, ""); err != nil || had || j.CheckRunID == nil {
			return err
		}
		return annotate(ctx, tx, *j.CheckRunID, res.Annotations)
	})
	return done, err
}

// annotate adds the annotations to the check run in tx and counts them
// in its output's annotations_count. A remote runner's are bounded as
// the engine bounds them.
func annotate(ctx context.Context, tx *store.Tx, checkRunID int64, list []engine.Annotation) error {
	if len(list) > engine.MaxJobAnnotations {
		list = list[:engine.MaxJobAnnotations]
	}
	for _, a := range list {
		level := a.Level
		if level != "failure" && level != "warning" {
			level = "notice"
		}
		if a.Path == "" {
			a.Path, a.StartLine, a.EndLine = ".github", 1, 1
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO check_annotations (check_run_id, path, start_line, end_line,
			start_column, end_column, annotation_level, title, message) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			checkRunID, a.Path, max(a.StartLine, 1), max(a.EndLine, a.StartLine, 1), a.StartColumn, a.EndColumn, level,
			nullIfEmpty(a.Title), a.Message)
		if err != nil {
			return err
		}
	}
	if len(list) == 0 {
		return nil
	}
	_, err := tx.ExecContext(ctx, `UPDATE check_runs SET annotations_count = annotations_count + $1 WHERE id = $2`,
		len(list), checkRunID)
	return err
}

// lostMessage is the log line of a job whose runner was lost.
const lostMessage = "The runner of this job was lost (it stopped while the job ran)."

// failLost ends the jobs in progress whose lease ran out (all the
// built-in runner's that are leased, when all is set): a job its runner
// never started is queued again, one started is completed as failed
// (never run twice: its steps may have had effects), and its run rolled
// up. It returns how many jobs it ended.
func (s *Service) failLost(ctx context.Context, all bool) (int64, error) {
	var rows *sql.Rows
	var err error
	if all {
		rows, err = s.DB.QueryContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE status = 'in_progress'
			AND lease_owner <> $1 AND runner_id IS NULL`, "")
	} else {
		rows, err = s.DB.QueryContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE status = 'in_progress' AND lease_until < $1`, store.Now())
	}
	lost, err := store.ScanAll(rows, err, scanJob)
	if err != nil {
		return 0, err
	}
	var n int64
	requeued := false
	for _, j := range lost {
		if err := s.revokeJobTokens(ctx, j.ID); err != nil {
			return n, err
		}
		if j.RunnerID != nil && s.Runners != nil { // an ephemeral runner's one claim is spent
			if err := s.Runners.RemoveEphemeral(ctx, *j.RunnerID); err != nil {
				return n, err
			}
		}
		err := s.DB.Tx(ctx, func(tx *store.Tx) error {
			if !j.RunnerStarted {
				done, err := s.requeue(ctx, tx, j)
				n, requeued = n+done, requeued || done > 0
				return err
			}
			done, err := store.Affected(tx.ExecContext(ctx, `UPDATE actions_jobs SET lease_owner = '', lease_until = NULL
				WHERE id = $1 AND status = 'in_progress' AND lease_until IS NOT NULL`, j.ID))
			if err != nil || done == 0 {
				return err
			}
			n++
			return s.completeJob(ctx, tx, j, Failure, lostMessage)
		})
		if err != nil {
			return n, err
		}
	}
	if requeued {
		s.wake()
	}
	return n, nil
}

// requeue puts a job its runner never started back in the queue, for
// another runner (or the same, back) to take.
func (s *Service) requeue(ctx context.Context, tx *store.Tx, j *Job) (int64, error) {
	done, err := store.Affected(tx.ExecContext(ctx, `UPDATE actions_jobs SET status = 'queued', started_at = NULL,
		lease_owner = '', lease_until = NULL, runner_name = NULL, runner_id = NULL, runner_group_id = NULL,
		runner_group_name = NULL WHERE id = $1 AND status = 'in_progress' AND lease_until IS NOT NULL AND NOT runner_started`, j.ID))
	if err != nil || done == 0 {
		return done, err
	}
	r, err := runOf(ctx, tx, j)
	if err != nil {
		return done, err
	}
	j.Status, j.StartedAt, j.RunnerName, j.RunnerID, j.RunnerGroupID, j.RunnerGroupName = StatusQueued, nil, nil, nil, nil, nil
	return done, s.emitJob(ctx, tx, "queued", r, j, nil)
}

// LostJobs is the worker that ends the jobs whose runner was lost (see
// failLost), on every server: the built-in runner's slots do it too, but
// registered runners' jobs need it when no built-in runner runs.
type LostJobs struct {
	s        *Service
	interval time.Duration
	logger   interface{ Error(string, ...any) }
}

// NewLostJobs returns the worker, looking every third of the service's
// lease (at least every second).
func NewLostJobs(s *Service, logger interface{ Error(string, ...any) }) *LostJobs {
	return &LostJobs{s: s, interval: max(s.lease()/3, time.Second), logger: logger}
}

// Run looks for lost jobs until ctx is done.
func (w *LostJobs) Run(ctx context.Context) {
	t := time.NewTicker(w.interval)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := w.s.failLost(ctx, false); err != nil && ctx.Err() == nil {
				w.logger.Error("end the Actions jobs of lost runners", "err", err)
			}
		}
	}
}

// broadcast wakes every waiter at once: each waits on the channel of the
// moment, which notify closes and replaces.
type broadcast struct {
	mu sync.Mutex
	c  chan struct{}
}

func newBroadcast() *broadcast { return &broadcast{c: make(chan struct{})} }

// wait is the channel closed at the next notify.
func (b *broadcast) wait() <-chan struct{} {
	if b == nil {
		return nil
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.c
}

// notify wakes the waiters.
func (b *broadcast) notify() {
	if b == nil {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	close(b.c)
	b.c = make(chan struct{})
}

// nullIfEmpty is s, or NULL when s is "".
func nullIfEmpty(s string) any {
	if s == "" {
		return nil
	}
	return s
}
