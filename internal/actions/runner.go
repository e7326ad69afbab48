package actions

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// RunnerConfig configures the built-in runner. Zero fields take the
// defaults.
type RunnerConfig struct {
	// Dir holds the jobs' work directories (each removed when its job
	// ends); default the system's temporary directory.
	Dir string
	// Lease is how long a claimed job stays this process's without a
	// renewal (default 30 s); a job whose lease ran out while in progress
	// is failed, never run again. Renewals come every Lease/10.
	Lease time.Duration
	// PollInterval is how often queued jobs are looked for without a wake
	// (default 5 s).
	PollInterval time.Duration
	// Name is the runner's name in jobs (default "forgeapi-builtin").
	Name string
	// Capacity is how many jobs run at once (default 2).
	Capacity int
}

// Runner is the built-in runner: a worker that claims queued jobs whose
// needs are done, runs them on the host (engine.Execute) and records
// their steps, outputs, logs and conclusion.
type Runner struct {
	s      *Service
	cfg    RunnerConfig
	owner  string
	wakes  []*worker.Signal // one per slot (Capacity)
	logger *slog.Logger
}

// NewRunner returns the built-in runner of the service's jobs and makes
// the service wake it when jobs are queued.
func NewRunner(s *Service, cfg RunnerConfig, logger *slog.Logger) *Runner {
	if cfg.Lease <= 0 {
		cfg.Lease = 30 * time.Second
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = 5 * time.Second
	}
	if cfg.Name == "" {
		cfg.Name = "forgeapi-builtin"
	}
	if cfg.Capacity <= 0 {
		cfg.Capacity = 2
	}
	if cfg.Dir == "" {
		cfg.Dir = os.TempDir()
	}
	if logger == nil {
		logger = slog.Default()
	}
	x := &Runner{s: s, cfg: cfg, owner: wire.NewGUID(), logger: logger}
	for range cfg.Capacity {
		x.wakes = append(x.wakes, worker.NewSignal())
	}
	s.Wake = x.wake
	return x
}

// wake wakes every slot's loop.
func (x *Runner) wake() {
	for _, w := range x.wakes {
		w.Wake()
	}
}

// Run runs queued jobs until ctx is done: Capacity slots, each its own
// loop claiming and running one job at a time, so that a long job does
// not hold back the jobs queued while it runs.
func (x *Runner) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for i, w := range x.wakes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			worker.Loop{Pass: func(ctx context.Context) { x.runSlot(ctx, i == 0) }, Interval: x.cfg.PollInterval, Wake: w.C()}.Run(ctx)
		}()
	}
	wg.Wait()
}

// runSlot is one slot's pass: the first slot fails the jobs whose runner
// was lost, then the slot runs the jobs it can claim, one after another.
func (x *Runner) runSlot(ctx context.Context, first bool) {
	ctx = httpapi.WithBaseURL(ctx, x.s.BaseURL)
	if first {
		if _, err := x.s.failLost(ctx, false); err != nil && ctx.Err() == nil {
			x.logger.Error("fail the jobs of lost runners", "err", err)
		}
	}
	if _, err := worker.Drain[*Job](ctx, queue{x}, func(j *Job, err error) {
		x.logger.Error("run an Actions job", "job_id", j.ID, "err", err)
	}); err != nil && ctx.Err() == nil {
		x.logger.Error("claim an Actions job", "err", err)
	}
}

// RunOnce fails the jobs whose runner was lost, then runs every job it
// can claim, Capacity at a time, and returns how many it ran.
func (x *Runner) RunOnce(ctx context.Context) int {
	ctx = httpapi.WithBaseURL(ctx, x.s.BaseURL)
	if _, err := x.s.failLost(ctx, false); err != nil && ctx.Err() == nil {
		x.logger.Error("fail the jobs of lost runners", "err", err)
	}
	var wg sync.WaitGroup
	var total atomic.Int64
	for range x.cfg.Capacity { // each drain claims its own jobs: a claim is a conditional update
		wg.Add(1)
		go func() {
			defer wg.Done()
			n, err := worker.Drain[*Job](ctx, queue{x}, func(j *Job, err error) {
				x.logger.Error("run an Actions job", "job_id", j.ID, "err", err)
			})
			if err != nil {
				x.logger.Error("claim an Actions job", "err", err)
			}
			total.Add(int64(n))
		}()
	}
	wg.Wait()
	return int(total.Load())
}

// ReleaseLeases fails now the jobs a killed process was running (a job
// is never run twice: its steps may have had effects), so that their runs
// complete at once rather than when the leases end. Only a server that is
// its database's only one calls it, before its runner starts.
func (s *Service) ReleaseLeases(ctx context.Context) (int64, error) {
	return s.failLost(httpapi.WithBaseURL(ctx, s.BaseURL), true)
}

// failLost completes as failed the jobs in progress whose lease ran out
// (all that are leased, when all is set) and rolls up their runs.
func (s *Service) failLost(ctx context.Context, all bool) (int64, error) {
	var rows *sql.Rows
	var err error
	if all {
		rows, err = s.DB.QueryContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE status = 'in_progress' AND lease_owner <> $1`, "")
	} else {
		rows, err = s.DB.QueryContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE status = 'in_progress' AND lease_until < $1`, store.Now())
	}
	lost, err := store.ScanAll(rows, err, scanJob)
	if err != nil {
		return 0, err
	}
	var n int64
	for _, j := range lost {
		err := s.DB.Tx(ctx, func(tx *store.Tx) error {
			done, err := store.Affected(tx.ExecContext(ctx, `UPDATE actions_jobs SET lease_owner = '', lease_until = NULL
				WHERE id = $1 AND status = 'in_progress' AND lease_until IS NOT NULL`, j.ID))
			if err != nil || done == 0 {
				return err
			}
			n++
			return s.completeJob(ctx, tx, j, Failure, "The runner of this job was lost (the server stopped while it ran).")
		})
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

// queue is the runner's view of the jobs table.
type queue struct{ x *Runner }

// Claim takes the oldest queued job whose needs are completed (then the
// waiting jobs whose environment's gate opened): a job whose need did
// not succeed is completed as skipped instead.
func (q queue) Claim(ctx context.Context) (*Job, bool, error) {
	rows, err := q.x.s.DB.QueryContext(ctx, `SELECT `+jobColumns+` FROM actions_jobs WHERE status IN ('queued', 'waiting')
		ORDER BY CASE WHEN status = 'queued' THEN 0 ELSE 1 END, id LIMIT 50`)
	queued, err := store.ScanAll(rows, err, scanJob)
	if err != nil {
		return nil, false, err
	}
	for _, j := range queued {
		claimed, err := q.x.claim(ctx, j)
		if err != nil || claimed {
			return j, claimed, err
		}
	}
	return nil, false, nil
}

// claim leases the job when its needs are done; false when they are not
// or another runner took it.
func (x *Runner) claim(ctx context.Context, j *Job) (bool, error) {
	claimed := false
	err := x.s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := runOf(ctx, tx, j)
		if err != nil {
			return err
		}
		ready, err := x.s.needsDone(ctx, tx, r, j)
		if err != nil || !ready {
			return err
		}
		if blocked, err := concurrencyBlocked(ctx, tx, r); err != nil || blocked {
			return err // an older run of its concurrency group is not done
		}
		if blocked, err := jobGroupBlocked(ctx, tx, j); err != nil || blocked {
			return err // an older job of its concurrency group is not done
		}
		if held, err := x.s.held(ctx, tx, r, j); err != nil || held {
			return err // its environment's protection holds it (gates.go)
		}
		now := tx.Now()
		n, err := store.Affected(tx.ExecContext(ctx, `UPDATE actions_jobs SET status = 'in_progress', started_at = $1,
			lease_owner = $2, lease_until = $3, runner_name = $4 WHERE id = $5 AND status IN ('queued', 'waiting')`,
			now, x.owner, now.Add(x.cfg.Lease), x.cfg.Name, j.ID))
		if err != nil || n == 0 {
			return err
		}
		claimed = true
		j.Status, j.StartedAt, j.RunnerName = StatusInProgress, &now, &x.cfg.Name
		if err := x.s.emitJob(ctx, tx, "in_progress", r, j, nil); err != nil {
			return err
		}
		if r.Status == StatusQueued || r.Status == StatusWaiting {
			r.Status = StatusInProgress
			if err := setRunState(ctx, tx, r, now); err != nil {
				return err
			}
			return x.s.emitRun(ctx, tx, "in_progress", r, nil)
		}
		return nil
	})
	return claimed, err
}

// runOf loads a job's run.
func runOf(ctx context.Context, q store.Q, j *Job) (*Run, error) {
	return runByID(ctx, q, j.RepoID, j.RunID)
}

// needsDone reports whether every job the job needs completed with
// success; when one completed otherwise the job is completed as skipped
// (and false returned).
func (s *Service) needsDone(ctx context.Context, tx *store.Tx, r *Run, j *Job) (bool, error) {
	if len(j.Needs) == 0 {
		return true, nil
	}
	jobs, err := jobsOf(ctx, tx, r.ID, j.RunAttempt)
	if err != nil {
		return false, err
	}
	return s.needsState(ctx, tx, r, j, jobs)
}

func (s *Service) needsState(ctx context.Context, tx *store.Tx, r *Run, j *Job, jobs []*Job) (bool, error) {
	ready := true
	for _, n := range jobs {
		if !neededBy(j.Needs, n.Key) {
			continue
		}
		if n.Status != StatusCompleted {
			ready = false
			continue
		}
		if n.Conclusion == nil || *n.Conclusion != Success {
			return false, s.completeJob(ctx, tx, j, Skipped, "")
		}
	}
	return ready, nil
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Run executes a claimed job and records how it ended.
func (q queue) Run(ctx context.Context, j *Job) error {
	return q.x.execute(ctx, j)
}

// execute runs the job in a work tree of its commit, renewing its lease,
// and records the result unless the lease was lost.
func (x *Runner) execute(ctx context.Context, j *Job) error {
	r, err := runOf(ctx, x.s.DB, j)
	if err != nil {
		return err
	}
	dir, err := os.MkdirTemp(x.cfg.Dir, fmt.Sprintf("forgeapi-job-%d-", j.ID))
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	spec, err := x.spec(ctx, r, j, dir)
	if err != nil {
		return x.finish(ctx, r, j, engine.Result{Conclusion: Failure}, dir, "The job could not start: "+err.Error())
	}
	if refusal, err := x.s.admit(ctx, r, j); err != nil || refusal != "" {
		if err != nil {
			refusal = "The job could not start: " + err.Error()
		}
		return x.finish(ctx, r, j, engine.Result{Conclusion: Failure}, dir, refusal)
	}
	revoke, err := x.withToken(ctx, &spec, r, j)
	if err != nil {
		return x.finish(ctx, r, j, engine.Result{Conclusion: Failure}, dir, "The job could not start: "+err.Error())
	}
	defer revoke()
	revokeRuntime, err := x.s.withRuntime(ctx, spec.Env, r, j)
	defer revokeRuntime()
	spec.Masks = append(spec.Masks, spec.Env["ACTIONS_RUNTIME_TOKEN"]) // as the platform's runner masks it
	if err != nil {
		return x.finish(ctx, r, j, engine.Result{Conclusion: Failure}, dir, "The job could not start: "+err.Error())
	}
	leased, stop := worker.Leased(ctx, x.cfg.Lease/10, func(ctx context.Context) (bool, error) {
		n, err := store.Affected(x.s.DB.ExecContext(ctx, `UPDATE actions_jobs SET lease_until = $1
			WHERE id = $2 AND lease_owner = $3 AND NOT cancel_requested`, store.Now().Add(x.cfg.Lease), j.ID, x.owner))
		return n > 0, err
	}, nil)
	defer stop()
	x.s.running.add(j.ID, stop)
	defer x.s.running.remove(j.ID)
	spec.OnStep = func(st engine.Step) { x.saveStep(leased, j, st) }
	res, err := engine.Execute(leased, spec)
	revoke() // the tokens end with the job, before the job is seen completed
	revokeRuntime()
	if err != nil {
		return x.finish(ctx, r, j, engine.Result{Conclusion: Failure}, dir, "The job could not start: "+err.Error())
	}
	if ctx.Err() != nil {
		return ctx.Err() // shutting down: the lease runs out and the job is failed as lost
	}
	if err := x.s.finished(ctx, r, j, res.Conclusion); err != nil { // before the job is seen completed
		x.logger.Error("record an Actions job's deployment", "job_id", j.ID, "err", err)
	}
	return x.finish(ctx, r, j, res, dir, "")
}

// spec prepares the job's work tree and the engine's input.
func (x *Runner) spec(ctx context.Context, r *Run, j *Job, dir string) (engine.Spec, error) {
	work, scratch := filepath.Join(dir, "work"), filepath.Join(dir, "scratch")
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return engine.Spec{}, err
	}
	var git gitcmd.Git
	if err := git.Run(ctx, "clone", "-q", "--no-checkout", x.s.Repos.GitDir(r.RepoID), work); err != nil {
		return engine.Spec{}, err
	}
	if err := git.Run(ctx, "-C", work, "checkout", "-q", "--detach", r.HeadSHA); err != nil {
		return engine.Spec{}, err
	}
	needs, err := x.s.needResults(ctx, r, j)
	if err != nil {
		return engine.Spec{}, err
	}
	repo, err := repos.ByID(ctx, x.s.DB, r.RepoID)
	if err != nil {
		return engine.Spec{}, err
	}
	log, err := os.Create(filepath.Join(dir, "job.log"))
	if err != nil {
		return engine.Spec{}, err
	}
	spec := engine.Spec{Workflow: []byte(r.WorkflowFile), JobKey: j.Key, Matrix: j.Matrix, Workdir: work, Scratch: scratch,
		Event: r.Event, EventPayload: r.EventPayload, Inputs: r.Inputs, Log: log,
		Env: map[string]string{"GITHUB_REPOSITORY": repo.FullName(), "GITHUB_SERVER_URL": x.s.BaseURL,
			"GITHUB_RUN_ID": itoa(r.ID), "GITHUB_RUN_NUMBER": itoa(r.RunNumber), "GITHUB_RUN_ATTEMPT": itoa(int64(r.RunAttempt))}}
	callSpec(&spec, r, j, needs) // the job's needs, or a called job's and its caller's
	if actor, err := actorOf(ctx, x.s.DB, r.TriggeringActorID); err == nil && actor != nil {
		spec.Actor = actor.Login
	}
	if x.s.Values != nil {
		if spec.Secrets, spec.Vars, err = x.s.Values.RunValues(ctx, r.RepoID, j.Environment); err != nil {
			return engine.Spec{}, err
		}
	}
	return spec, nil
}

// withToken gives the job its GITHUB_TOKEN, with the job's permissions,
// and returns its revocation.
func (x *Runner) withToken(ctx context.Context, spec *engine.Spec, r *Run, j *Job) (func(), error) {
	repo, err := repos.ByID(ctx, x.s.DB, r.RepoID)
	if err != nil {
		return nil, err
	}
	key := j.Key
	if caller, _, ok := callOf(key); ok {
		key = caller // a called job has its caller job's permissions
	}
	grant, err := x.s.jobGrant(ctx, r, key)
	if err != nil {
		return nil, err
	}
	token, revoke, err := x.s.jobToken(ctx, repo, grant)
	spec.Token = token
	return revoke, err
}

// needResults are the results and outputs of the jobs the job needs (a
// matrix's jobs together: success when all succeeded, their outputs
// merged; a call's jobs together, its outputs the called workflow's).
func (s *Service) needResults(ctx context.Context, r *Run, j *Job) (map[string]engine.Need, error) {
	jobs, err := jobsOf(ctx, s.DB, r.ID, j.RunAttempt)
	if err != nil {
		return nil, err
	}
	out := map[string]engine.Need{}
	for _, need := range j.Needs {
		n := engine.Need{Result: Success, Outputs: map[string]string{}}
		call := false
		for _, o := range jobs {
			if !calledBy(need, o.Key) {
				continue
			}
			call = call || o.Key != need
			if o.Conclusion == nil || *o.Conclusion != Success {
				n.Result = Failure
			}
			for k, v := range o.Outputs {
				if v != "" {
					n.Outputs[k] = v
				}
			}
		}
		if call {
			if n.Outputs, err = callOutputs(need, jobs); err != nil {
				return nil, fmt.Errorf("the outputs of %s: %w", need, err)
			}
		}
		out[need] = n
	}
	return out, nil
}

// saveStep records a step's progress while the job runs.
func (x *Runner) saveStep(ctx context.Context, j *Job, st engine.Step) {
	applyStep(j, st)
	if err := saveJob(ctx, x.s.DB, j); err != nil && ctx.Err() == nil {
		x.logger.Warn("record an Actions step", "job_id", j.ID, "err", err)
	}
}

// applyStep puts an engine step into the job's steps: by number, or
// appended when the workflow's list had fewer.
func applyStep(j *Job, st engine.Step) {
	step := Step{Name: st.Name, Status: st.Status, Number: st.Number, LogFrom: st.LogFrom, LogTo: st.LogTo}
	if !st.StartedAt.IsZero() {
		t := st.StartedAt.UTC().Truncate(time.Second)
		step.StartedAt = &t
	}
	if st.Status == StatusCompleted {
		c := st.Conclusion
		t := st.CompletedAt.UTC().Truncate(time.Second)
		step.Conclusion, step.CompletedAt = &c, &t
	}
	if st.Name == "Complete job" {
		for len(j.Steps) > 0 && j.Steps[len(j.Steps)-1].Status == StatusQueued && len(j.Steps) >= st.Number {
			j.Steps = j.Steps[:len(j.Steps)-1]
		}
	}
	for i := range j.Steps {
		if j.Steps[i].Number == st.Number {
			j.Steps[i] = step
			return
		}
	}
	j.Steps = append(j.Steps, step)
}

// finish stores the job's log and result, unless its lease was lost.
func (x *Runner) finish(ctx context.Context, r *Run, j *Job, res engine.Result, dir, message string) error {
	logFile := filepath.Join(dir, "job.log")
	if message != "" {
		f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
		if err == nil {
			_, _ = fmt.Fprintf(f, "%s ##[error]%s\n", time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z"), message)
			_ = f.Close()
		}
	}
	if x.s.Blobs != nil {
		if f, err := os.Open(logFile); err == nil {
			_, err = x.s.Blobs.Put(ctx, jobLogKey(j.ID), f)
			_ = f.Close()
			if err != nil {
				return err
			}
			j.HasLog = true
		}
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
	return x.s.DB.Tx(ctx, func(tx *store.Tx) error {
		var cancel bool
		n, err := store.Affected(tx.ExecContext(ctx, `UPDATE actions_jobs SET lease_owner = '', lease_until = NULL
			WHERE id = $1 AND lease_owner = $2 AND status = 'in_progress'`, j.ID, x.owner))
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
		return x.s.completeJob(ctx, tx, j, conclusion, "")
	})
}

// jobLogKey is the blob key of a job's log.
func jobLogKey(id int64) string { return "actions-job-" + itoa(id) + ".log" }

// completeJob completes the job with the conclusion, emits workflow_job
// completed and rolls up its run.
func (s *Service) completeJob(ctx context.Context, tx *store.Tx, j *Job, conclusion, message string) error {
	now := tx.Now()
	j.Status, j.Conclusion, j.CompletedAt = StatusCompleted, &conclusion, &now
	if j.StartedAt == nil && conclusion != Skipped {
		j.StartedAt = &now
	}
	if conclusion != Success {
		for i := range j.Steps {
			if j.Steps[i].Status != StatusCompleted {
				c := conclusion
				if c == Failure {
					c = Skipped
				}
				j.Steps[i].Status, j.Steps[i].Conclusion = StatusCompleted, &c
			}
		}
	}
	if message != "" && s.Blobs != nil {
		_, _ = s.Blobs.Put(ctx, jobLogKey(j.ID), strings.NewReader(now.Format("2006-01-02T15:04:05.0000000Z")+" ##[error]"+message+"\n"))
		j.HasLog = true
	}
	if err := saveJob(ctx, tx, j); err != nil {
		return err
	}
	r, err := runOf(ctx, tx, j)
	if err != nil {
		return err
	}
	if err := s.emitJob(ctx, tx, "completed", r, j, nil); err != nil {
		return err
	}
	if j.RunAttempt != r.RunAttempt {
		return nil
	}
	return s.rollUp(ctx, tx, r)
}

// rollUp skips the queued jobs whose needs did not succeed and completes
// the run once all its attempt's jobs are: failure when one failed, else
// cancelled when one was, else success.
func (s *Service) rollUp(ctx context.Context, tx *store.Tx, r *Run) error {
	jobs, err := jobsOf(ctx, tx, r.ID, r.RunAttempt)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if j.Status == StatusQueued && len(j.Needs) > 0 {
			if _, err := s.needsState(ctx, tx, r, j, jobs); err != nil {
				return err
			}
			if j.Status == StatusCompleted {
				return nil // completeJob rolled the run up again
			}
		}
	}
	conclusion := Success
	for _, j := range jobs {
		switch {
		case j.Status != StatusCompleted:
			return nil
		case *j.Conclusion == Failure:
			conclusion = Failure
		case *j.Conclusion == Cancelled && conclusion == Success:
			conclusion = Cancelled
		}
	}
	if r.Status == StatusCompleted {
		return nil
	}
	r.Status, r.Conclusion = StatusCompleted, &conclusion
	if err := setRunState(ctx, tx, r, tx.Now()); err != nil {
		return err
	}
	return s.emitRun(ctx, tx, "completed", r, nil)
}

// runningJobs are the jobs this process runs, to stop one at once when
// its run is cancelled here (other processes see the cancel at their
// next lease renewal).
type runningJobs struct {
	mu   sync.Mutex
	stop map[int64]context.CancelFunc
}

func newRunningJobs() *runningJobs { return &runningJobs{stop: map[int64]context.CancelFunc{}} }

func (r *runningJobs) add(id int64, stop context.CancelFunc) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.stop[id] = stop
}

func (r *runningJobs) remove(id int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	delete(r.stop, id)
}

// cancel stops the jobs of the ids this process runs.
func (r *runningJobs) cancel(ids []int64) {
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, id := range ids {
		if stop, ok := r.stop[id]; ok {
			stop()
		}
	}
}

// errNotCompleted is a rerun or deletion of a run still under way.
var errNotCompleted = errors.New("actions: the run is not completed")
