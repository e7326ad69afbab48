package actions

import (
	"context"
	"encoding/json"
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
	// renewal (default the service's Lease); a job whose lease ran out
	// while in progress is failed, never run again (queued again when it
	// had not started). Renewals come every Lease/10.
	Lease time.Duration
	// PollInterval is how often queued jobs are looked for without a wake
	// (default 5 s).
	PollInterval time.Duration
	// Name is the runner's name in jobs (default "forgeapi-builtin").
	Name string
	// Capacity is how many jobs run at once (default 2).
	Capacity int
	// Images maps runs-on labels (lower-case) to container images: the
	// jobs with such a label run in a container of its image, the others
	// on the host (engine.Spec.Images).
	Images map[string]string
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
		cfg.Lease = s.lease()
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

// BuiltinIdentity is the engine.Spec.Runner of the built-in runner of
// that name: the same for every server on the machine (the containers of
// the processes still running are kept: engine.RemoveLeftovers).
func BuiltinIdentity(name string) string {
	return "builtin " + name
}

func (x *Runner) identity() string { return BuiltinIdentity(x.cfg.Name) }

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
	if n, err := engine.RemoveLeftovers(ctx, x.identity()); n > 0 || (err != nil && len(x.cfg.Images) > 0) {
		x.logger.Info("removed the containers of jobs a killed server process left", "containers", n, "err", err)
	}
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

// ReleaseLeases fails now the jobs a killed process's built-in runner was
// running (a job is never run twice: its steps may have had effects; one
// it had not started is queued again), so that their runs complete at
// once rather than when the leases end. Registered runners' jobs are left
// to their leases: those runners outlive a server's restart. Only a
// server that is its database's only one calls it, before its runner
// starts.
func (s *Service) ReleaseLeases(ctx context.Context) (int64, error) {
	return s.failLost(httpapi.WithBaseURL(ctx, s.BaseURL), true)
}

// queue is the runner's view of the jobs table.
type queue struct{ x *Runner }

// Claim takes the oldest queued job the built-in runner takes (those
// that do not ask for self-hosted) whose needs are completed (then the
// waiting jobs whose environment's gate opened): a job whose need did
// not succeed is completed as skipped instead.
func (q queue) Claim(ctx context.Context) (*Job, bool, error) {
	return q.x.s.claimNext(ctx, q.x.claimant())
}

// claimant is the built-in runner as it claims jobs.
func (x *Runner) claimant() claimant {
	return claimant{owner: x.owner, name: x.cfg.Name, lease: x.cfg.Lease}
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
		if !neededBy(j, n) {
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
	// The lease is renewed from the claim on: preparing the job (its clone) may take long.
	leased, stop := worker.Leased(ctx, x.cfg.Lease/10, func(ctx context.Context) (bool, error) {
		return x.s.renewLease(ctx, j.ID, x.owner, x.cfg.Lease)
	}, nil)
	defer stop()
	defer x.s.revokeJobTokens(ctx, j.ID) //nolint:errcheck // revoked before the job completes; this is for the early returns
	spec, refusal, err := x.s.prepare(ctx, r, j)
	if err != nil {
		return err
	}
	if refusal == "" {
		refusal = x.workTree(ctx, &spec, r, dir)
	}
	if f, ok := spec.Log.(*os.File); ok {
		defer f.Close()
	}
	if refusal != "" {
		return x.finish(ctx, r, j, engine.Result{Conclusion: Failure}, dir, refusal)
	}
	if ok, err := x.s.markStarted(ctx, j.ID, x.owner); err != nil || !ok {
		return err // the lease was lost: the job was queued again
	}
	x.s.running.add(j.ID, stop)
	defer x.s.running.remove(j.ID)
	spec.OnStep = func(st engine.Step) { x.saveStep(leased, j, st) }
	spec.Images = x.cfg.Images
	spec.Runner = x.identity()
	res, err := engine.Execute(leased, spec)
	if err := x.s.revokeJobTokens(ctx, j.ID); err != nil { // the tokens end with the job, before the job is seen completed
		x.logger.Warn("revoke an Actions job's tokens", "job_id", j.ID, "err", err)
	}
	if err != nil {
		return x.finish(ctx, r, j, engine.Result{Conclusion: Failure}, dir, "The job could not start: "+err.Error())
	}
	if ctx.Err() != nil {
		return ctx.Err() // shutting down: the lease runs out and the job is failed as lost
	}
	return x.finish(ctx, r, j, res, dir, "")
}

// workTree clones the run's commit into dir/work, makes dir/scratch and
// the job's log file, and points spec at them; a non-empty result is the
// message the job fails with.
func (x *Runner) workTree(ctx context.Context, spec *engine.Spec, r *Run, dir string) string {
	work, scratch := filepath.Join(dir, "work"), filepath.Join(dir, "scratch")
	err := os.MkdirAll(scratch, 0o700)
	var git gitcmd.Git
	if err == nil {
		err = git.Run(ctx, "clone", "-q", "--no-checkout", x.s.Repos.GitDir(r.RepoID), work)
	}
	if err == nil {
		err = git.Run(ctx, "-C", work, "checkout", "-q", "--detach", r.HeadSHA)
	}
	if err == nil {
		spec.Log, err = os.Create(filepath.Join(dir, "job.log"))
	}
	if err != nil {
		return "The job could not start: " + err.Error()
	}
	spec.Workdir, spec.Scratch = work, scratch
	return ""
}

// needResults are the results and outputs of the jobs the job needs (a
// matrix's jobs together: success when all succeeded, their outputs
// merged; a call's jobs together, its outputs the called workflow's; a
// matrix of calls' outputs those of the call that completed last, as on
// the platform).
func (s *Service) needResults(ctx context.Context, r *Run, j *Job) (map[string]engine.Need, error) {
	jobs, err := jobsOf(ctx, s.DB, r.ID, j.RunAttempt)
	if err != nil {
		return nil, err
	}
	out := map[string]engine.Need{}
	for _, need := range j.Needs {
		n := engine.Need{Result: Success, Outputs: map[string]string{}}
		call := false
		var under []*Job // the jobs of the need, of j's call
		for _, o := range jobs {
			if !calledBy(need, o.Key) || !sameCall(j, o, need) {
				continue
			}
			under = append(under, o)
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
			if n.Outputs, err = callOutputs(need, lastCall(need, under)); err != nil {
				return nil, fmt.Errorf("the outputs of %s: %w", need, err)
			}
		}
		out[need] = n
	}
	return out, nil
}

// lastCall are the jobs, of those under the need (a caller job), of the
// call that completed last: a caller job with a matrix makes one call per
// combination, and the platform gives its dependents the outputs of the
// last one to complete (a call completes with its last job; a tie goes to
// the later call).
func lastCall(need string, under []*Job) []*Job {
	level := len(strings.Split(need, engine.KeySep)) - 1 // the need's index in its jobs' callers
	type call struct {
		jobs []*Job
		done time.Time
		last int64
	}
	calls := map[string]*call{}
	var order []string
	for _, o := range under {
		chain := callersOf(o)
		combo := ""
		if level < len(chain) {
			b, _ := json.Marshal(chain[level].Matrix) // map keys sorted: one string per combination
			combo = string(b)
		}
		c := calls[combo]
		if c == nil {
			c = &call{}
			calls[combo] = c
			order = append(order, combo)
		}
		c.jobs = append(c.jobs, o)
		if o.CompletedAt != nil && o.CompletedAt.After(c.done) {
			c.done = *o.CompletedAt
		}
		c.last = max(c.last, o.ID)
	}
	var best *call
	for _, k := range order {
		c := calls[k]
		if best == nil || c.done.After(best.done) || c.done.Equal(best.done) && c.last > best.last {
			best = c
		}
	}
	if best == nil {
		return under
	}
	return best.jobs
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

// finish stores the job's log (with message, when not "", as its last
// line) and result, unless its lease was lost.
func (x *Runner) finish(ctx context.Context, r *Run, j *Job, res engine.Result, dir, message string) error {
	logFile := filepath.Join(dir, "job.log")
	if message != "" {
		if err := engine.AppendError(logFile, message); err != nil {
			return err
		}
		res.Annotations = append(res.Annotations, engine.JobAnnotation(message))
	}
	if f, err := os.Open(logFile); err == nil {
		err = x.s.saveLog(ctx, j, f)
		_ = f.Close()
		if err != nil {
			return err
		}
	}
	_, err := x.s.complete(ctx, x.owner, r, j, res)
	return err
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
	if jobs, err = s.lockRun(ctx, tx, r); err != nil {
		return err
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

// lockRun locks the run's row for the rest of tx, reads its status and
// conclusion again and returns its attempt's jobs as committed: the
// completions of one run's jobs roll it up one after another, each
// seeing the jobs the ones before it completed. (On PostgreSQL two jobs
// completing at once would otherwise each see the other in progress and
// leave the run in progress for good.) Taken after the job rows a
// completion writes, as the claim path takes them.
func (s *Service) lockRun(ctx context.Context, tx *store.Tx, r *Run) ([]*Job, error) {
	err := tx.QueryRowContext(ctx, `SELECT status, conclusion FROM actions_runs WHERE id = $1`+tx.ForUpdate(),
		r.ID).Scan(&r.Status, &r.Conclusion)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return jobsOf(ctx, tx, r.ID, r.RunAttempt)
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
