package runnerclient

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"time"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/actions/runnerproto"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// Runner runs the jobs a registered runner claims, Capacity at a time
// (an ephemeral runner one job in all).
type Runner struct {
	Config *Config
	// Capacity is how many jobs it runs at a time (default 1; an
	// ephemeral runner 1).
	Capacity int
	// Dir holds the jobs' work directories (each removed when its job
	// ends); default the system's temporary directory.
	Dir string
	// Wait is how long a claim waits for a job at the server (default and
	// at most runnerproto.MaxWait).
	Wait time.Duration
	// Images maps runs-on labels (lower-case) to container images: the
	// jobs with such a label run in a container of its image, the others
	// on the host (engine.Spec.Images).
	Images map[string]string
	// Logger logs the jobs taken and the errors; default slog's.
	Logger *slog.Logger
	// HTTP is the client of the server; default http.DefaultClient.
	HTTP *http.Client
	// Jobs, when not nil, is told of each job's id as the runner starts
	// it (tests).
	Jobs chan<- int64

	session string // this Run's, sent with each claim
}

// ErrUnregistered is Run's error when the server no longer knows the
// runner's credential (it was removed, or an ephemeral runner ran its
// job).
var ErrUnregistered = errors.New("runner: the server does not know this runner (removed, or an ephemeral runner already used?)")

// ErrInUse is Run's error when the server refuses an ephemeral runner's
// claims because another runner process uses its configuration (a
// just-in-time configuration runs once).
var ErrInUse = errors.New("runner: this ephemeral runner's configuration is already used by another runner process")

// Run claims and runs jobs until ctx is done, Capacity at a time, then
// tells the server the runner went offline; an ephemeral runner returns
// once its one job ended. A job running when ctx is done is abandoned:
// its lease runs out and the server fails it.
func (x *Runner) Run(ctx context.Context) error {
	c := x.client()
	x.session = wire.NewGUID()
	defer func() {
		off, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		_, _ = c.do(off, http.MethodPost, runnerproto.OfflinePath, "", struct{}{}, nil)
	}()
	slots := max(x.Capacity, 1)
	if x.Config.Ephemeral {
		slots = 1
	}
	x.logger().Info("runner online", "name", x.Config.Name, "url", x.Config.URL, "labels", x.Config.Labels, "capacity", slots,
		"ephemeral", x.Config.Ephemeral)
	if n, err := engine.RemoveLeftovers(ctx, x.identity()); n > 0 || (err != nil && len(x.Images) > 0) {
		x.logger().Info("removed the containers of jobs a killed runner process left", "containers", n, "err", err)
	}
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	errs := make(chan error, slots)
	for range slots {
		go func() { errs <- x.slot(ctx, c) }()
	}
	var first error
	for range slots {
		if err := <-errs; err != nil && first == nil {
			first = err
			stop() // the runner is gone: the other slots stop too
		}
	}
	return first
}

// slot claims and runs jobs one at a time until ctx is done (an
// ephemeral runner's one job).
func (x *Runner) slot(ctx context.Context, c client) error {
	failures := 0
	for ctx.Err() == nil {
		job, err := x.claim(ctx, c)
		switch {
		case ctx.Err() != nil:
			return nil
		case statusOf(err) == http.StatusUnauthorized:
			return ErrUnregistered
		case x.Config.Ephemeral && statusOf(err) == http.StatusConflict:
			return ErrInUse
		case err != nil:
			failures++
			x.logger().Warn("claim a job", "err", err)
			sleep(ctx, min(time.Duration(failures)*time.Second, 30*time.Second))
			continue
		}
		failures = 0
		if job != nil {
			x.runJob(ctx, c, job)
			if x.Config.Ephemeral {
				return nil
			}
		}
	}
	return nil
}

// identity is the runner's engine.Spec.Runner: its server and id.
func (x *Runner) identity() string {
	return fmt.Sprintf("%s#%d", x.Config.URL, x.Config.ID)
}

func (x *Runner) client() client {
	return client{base: x.Config.URL, auth: x.Config.Credential, http: x.HTTP}
}

func (x *Runner) logger() *slog.Logger {
	if x.Logger == nil {
		return slog.Default()
	}
	return x.Logger
}

// claim asks the server for a job, waiting up to Wait; nil when none
// came.
func (x *Runner) claim(ctx context.Context, c client) (*runnerproto.Job, error) {
	wait := x.Wait
	if wait <= 0 || wait > runnerproto.MaxWait {
		wait = runnerproto.MaxWait
	}
	var job runnerproto.Job
	status, err := c.do(ctx, http.MethodPost, runnerproto.ClaimPath, "", runnerproto.Claim{Wait: int(wait / time.Second), Session: x.session}, &job)
	if err != nil || status == http.StatusNoContent {
		return nil, err
	}
	return &job, nil
}

// runJob starts, runs and finishes a claimed job; a job whose claim was
// lost meanwhile is left to the server.
func (x *Runner) runJob(ctx context.Context, c client, job *runnerproto.Job) {
	log := x.logger().With("job_id", job.ID, "repository", job.Repository)
	jc := jobClient{client: c, job: job}
	if err := jc.post(ctx, runnerproto.StartPath, struct{}{}, nil); err != nil {
		log.Warn("start the job", "err", err) // its lease ran out: the server queued it again
		return
	}
	if x.Jobs != nil {
		x.Jobs <- job.ID
	}
	log.Info("job started", "job", job.Spec.JobKey)
	dir, err := os.MkdirTemp(x.Dir, fmt.Sprintf("forgeapi-job-%d-", job.ID))
	if err != nil {
		log.Error("make the job's directory", "err", err)
		return // the lease runs out: the job is failed
	}
	defer os.RemoveAll(dir)
	lease := max(time.Duration(job.Lease)*time.Second, time.Second)
	leased, stop := worker.Leased(ctx, lease/10, func(ctx context.Context) (bool, error) {
		err := jc.post(ctx, runnerproto.RenewPath, struct{}{}, nil)
		if s := statusOf(err); s == http.StatusConflict || s == http.StatusUnauthorized {
			return false, nil // lost, cancelled, or the runner removed: the job stops
		}
		return err == nil, err
	}, func(err error) { log.Warn("renew the job's lease", "err", err) })
	defer stop()
	res, message := x.execute(ctx, leased, jc, dir)
	if ctx.Err() != nil {
		return // stopping: the lease runs out and the server fails the job
	}
	logFile := filepath.Join(dir, "job.log")
	if message != "" {
		res = engine.Result{Conclusion: engine.Failure, Annotations: []engine.Annotation{engine.JobAnnotation(message)}}
		if err := engine.AppendError(logFile, message); err != nil {
			log.Warn("write the job's log", "err", err)
		}
	}
	if err := jc.uploadLog(ctx, logFile); err != nil {
		log.Warn("upload the job's log", "err", err)
	}
	err = jc.post(ctx, runnerproto.FinishPath, runnerproto.Finish{Conclusion: res.Conclusion, Outputs: res.Outputs, Steps: res.Steps,
		Annotations: res.Annotations}, nil)
	if err != nil {
		log.Warn("finish the job", "err", err)
		return
	}
	log.Info("job finished", "conclusion", res.Conclusion)
}

// execute prepares the job's work tree and runs it with the engine under
// the leased context; a message is why it could not start.
func (x *Runner) execute(ctx, leased context.Context, jc jobClient, dir string) (engine.Result, string) {
	spec := jc.job.Spec.Engine()
	logFile, err := os.Create(filepath.Join(dir, "job.log"))
	if err != nil {
		return engine.Result{}, "The job could not start: " + err.Error()
	}
	defer logFile.Close()
	if err := x.workTree(leased, jc, dir, &spec); err != nil {
		return engine.Result{}, "The job could not start: " + err.Error()
	}
	spec.Log = logFile
	spec.Images = x.Images
	spec.Runner = x.identity()
	spec.OnStep = func(st engine.Step) {
		if err := jc.post(ctx, runnerproto.StepPath, st, nil); err != nil && leased.Err() == nil {
			x.logger().Warn("report a step", "job_id", jc.job.ID, "err", err)
		}
	}
	res, err := engine.Execute(leased, spec)
	if err != nil {
		return engine.Result{}, "The job could not start: " + err.Error()
	}
	return res, ""
}

// workTree fetches the job's repository (a git bundle from the server),
// checks out its commit in dir/work with the repository's address as
// origin, and makes dir/scratch.
func (x *Runner) workTree(ctx context.Context, jc jobClient, dir string, spec *engine.Spec) error {
	bundle := filepath.Join(dir, "source.bundle")
	f, err := os.Create(bundle)
	if err != nil {
		return err
	}
	_, err = jc.do(ctx, http.MethodGet, runnerproto.JobPath(runnerproto.SourcePath, jc.job.ID), jc.job.Claim, nil, f)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("fetch the repository: %w", err)
	}
	defer os.Remove(bundle)
	work, scratch := filepath.Join(dir, "work"), filepath.Join(dir, "scratch")
	var git gitcmd.Git
	for _, args := range [][]string{{"clone", "-q", "--no-checkout", bundle, work},
		{"-C", work, "checkout", "-q", "--detach", jc.job.HeadSHA},
		{"-C", work, "remote", "set-url", "origin", jc.job.CloneURL}} {
		if err := git.Run(ctx, args...); err != nil {
			return err
		}
	}
	if err := os.MkdirAll(scratch, 0o700); err != nil {
		return err
	}
	spec.Workdir, spec.Scratch = work, scratch
	return nil
}

// jobClient makes the requests about one claimed job.
type jobClient struct {
	client
	job *runnerproto.Job
}

// post sends a job request of the pattern (runnerproto.StartPath, ...).
func (jc jobClient) post(ctx context.Context, pattern string, body, out any) error {
	_, err := jc.do(ctx, http.MethodPost, runnerproto.JobPath(pattern, jc.job.ID), jc.job.Claim, body, out)
	return err
}

// uploadLog sends the job's log file.
func (jc jobClient) uploadLog(ctx context.Context, path string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	_, err = jc.do(ctx, http.MethodPut, runnerproto.JobPath(runnerproto.LogPath, jc.job.ID), jc.job.Claim, f, nil)
	return err
}
