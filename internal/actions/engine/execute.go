package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nektos/act/pkg/model"
	"github.com/nektos/act/pkg/runner"
	"github.com/sirupsen/logrus"
)

// Conclusions of a job and of a step.
const (
	Success   = "success"
	Failure   = "failure"
	Cancelled = "cancelled"
	Skipped   = "skipped"
)

// Need is the result of a job another job needs: needs.KEY.result and
// needs.KEY.outputs.
type Need struct {
	Result  string
	Outputs map[string]string
}

// Spec is one job to execute.
type Spec struct {
	Workflow []byte         // the workflow file
	JobKey   string         // the job's key
	Matrix   map[string]any // its matrix combination, nil without one
	// Workdir is the checked-out work tree the steps run in; Scratch is a
	// directory of the job's own for act's files (both made by the
	// caller, removed by the caller).
	Workdir, Scratch string
	Event            string // the event's name (push, workflow_dispatch, ...)
	EventPayload     []byte // the event's payload (github.event)
	Actor            string
	// Inputs, Secrets and Vars are the inputs, secrets and vars contexts;
	// every secret value is masked as *** in the log.
	Inputs, Secrets, Vars map[string]string
	// Env is added to every step's environment (the marker of the job's
	// processes is added by Execute).
	Env   map[string]string
	Token string // GITHUB_TOKEN, "" for none (masked in the log)
	// Masks are other values shown as *** in the log, wherever a step
	// prints them (the job's ACTIONS_RUNTIME_TOKEN).
	Masks []string
	Needs map[string]Need // the results of the jobs it needs
	Log   io.Writer       // receives the job's log, one timestamped line at a time
	// Call is, for a job of a called reusable workflow, its caller (the
	// Workflow is then the called workflow's, Needs the needs among its
	// jobs, by their keys in it); nil for the others.
	Call *CallSpec
	// Images maps runs-on labels (lower-case) to container images, as
	// act's -P: a job whose runs-on has a mapped label runs its steps in a
	// container of the first such label's image, on the host network so
	// that the job's URLs of the server work in it; a job without one runs
	// on the host. A job with container: runs in that container whatever
	// its labels. Both need a Docker daemon (DOCKER_HOST, or the default
	// socket): without one Execute returns ErrNoContainerRuntime.
	Images map[string]string
	// Runner, when set, names the runner running the job (any string
	// that stays the same across the runner's restarts): the job's
	// containers are labelled with it and with this process, so that
	// RemoveLeftovers, when the runner starts again, removes the
	// containers of its jobs that a killed process left.
	Runner string
	// OnStep, when set, is told of every step's start and end (from the
	// goroutine running the job).
	OnStep func(Step)
	Now    func() time.Time
}

// Step is a step of a job as it ran: "Set up job", each of the workflow's
// steps, "Complete job".
type Step struct {
	Number      int
	Name        string
	Status      string // in_progress or completed
	Conclusion  string // success, failure, skipped, cancelled ("" while in progress)
	StartedAt   time.Time
	CompletedAt time.Time
	// LogFrom and LogTo are the step's part of the job's log, in bytes.
	LogFrom, LogTo int64
}

// Result is how a job ended.
type Result struct {
	Conclusion string            // success, failure or cancelled
	Outputs    map[string]string // the job's outputs
	Steps      []Step
	// Annotations are those of the steps' workflow commands, in order.
	Annotations []Annotation
}

// Execute runs the job with act, on the host or in a container (see
// Spec.Images), with its services (a host job's beside it on the host,
// their ports published there: startHostServices), and returns its result once it ended: when ctx is
// cancelled the step running is stopped (on the host its process group
// and every process it started are killed; the job's containers are
// killed) and the result is cancelled. No container the job ran
// (labelled JobLabel) is left when Execute returns. An error means the
// job could not start (a workflow that does not parse, a job that is not
// in it, a job needing containers without a container runtime, a host
// job's service that does not start).
func Execute(ctx context.Context, s Spec) (Result, error) {
	wf, err := model.ReadWorkflow(bytes.NewReader(s.Workflow), false)
	if err != nil {
		return Result{}, err
	}
	job := wf.GetJob(s.JobKey)
	if job == nil {
		return Result{}, fmt.Errorf("%w: %q", ErrNoJob, s.JobKey)
	}
	injectNeeds(wf, s.JobKey, s.Needs)
	if err := s.checkRuntime(ctx, job); err != nil {
		return Result{}, err
	}
	cfg, err := s.config(job)
	if err != nil {
		return Result{}, err
	}
	marker := cfg.Env[markerEnv]
	if s.needsRuntime(job) {
		defer removeContainers(marker)
	}
	steps := job.Steps // named as the workflow names them
	if !s.inContainer(job) && len(job.Services) > 0 {
		var env map[string]string
		if wf, job, env, err = s.withHostServices(ctx, job, marker); err != nil {
			return Result{}, err
		}
		for k, v := range env {
			cfg.Env[k] = v
		}
	}
	if s.inContainer(job) && len(job.Services) > 0 { // on the services' network: the server through a relay
		rel, err := relayLoopback(ctx, cfg.Env)
		if err != nil {
			return Result{}, fmt.Errorf("relay the server to the job's network: %w", err)
		}
		defer rel.close()
	}
	if s.inContainer(job) {
		s.labelContainer(job, marker)
		s.labelServices(job, marker)
		// act names the job's containers after the workflow's and the
		// job's names: the marker makes them the job's own, so that two
		// runs of the job at once do not remove each other's.
		name := job.Name
		if name == "" {
			name = s.JobKey
		}
		job.Name = name + " " + marker
	}
	r, skip, err := s.newRunner(ctx, cfg)
	if err != nil {
		return Result{}, err
	}
	if skip {
		return Result{Conclusion: Skipped, Outputs: map[string]string{}}, nil
	}
	rec := newRecorder(s)
	for i, st := range steps {
		if st != nil {
			id := st.ID
			if id == "" {
				id = strconv.Itoa(i) // as act names the steps without an id
			}
			rec.names[id] = StepName(st.Name, st.Uses, st.Run, st.ID)
		}
	}
	plan := &model.Plan{Stages: []*model.Stage{{Runs: []*model.Run{{Workflow: wf, JobID: s.JobKey}}}}}
	runCtx := runner.WithJobLoggerFactory(ctx, rec)
	done := make(chan error, 1)
	go func() { done <- r.NewPlanExecutor(plan)(runCtx) }()
	var runErr error
	select {
	case runErr = <-done:
	case <-ctx.Done():
		var wg sync.WaitGroup
		if s.inContainer(job) { // Docker too: the server may not kill the containers' processes
			wg.Add(1)
			go func() {
				defer wg.Done()
				killContainers(marker)
			}()
		}
		killMarked(marker)
		wg.Wait()
		runErr = <-done
	}
	killMarked(marker) // what a step left running in the background
	if s.inContainer(job) {
		_ = giveBackWorkdir(s.Workdir, s.containerImage(job), marker, s.jobLabels(marker)) // best effort: see giveBackWorkdir
	}
	res := Result{Conclusion: Success, Outputs: map[string]string{}, Steps: rec.finish(ctx.Err() != nil)}
	res.Annotations = rec.annotations
	if ctx.Err() != nil {
		for i := range res.Steps { // the step killed by the cancel
			if res.Steps[i].Conclusion == Failure {
				res.Steps[i].Conclusion = Cancelled
			}
		}
	}
	for k, v := range job.Outputs {
		res.Outputs[k] = v
	}
	switch {
	case ctx.Err() != nil:
		res.Conclusion = Cancelled
	case runErr != nil || job.Result == Failure:
		res.Conclusion = Failure
	}
	return res, nil
}

// keptEnv are the variables of the server's environment a job sees; the
// others (database addresses, keys, cloud credentials) are emptied.
var keptEnv = map[string]bool{"PATH": true, "HOME": true, "USER": true, "LOGNAME": true, "SHELL": true, "LANG": true,
	"LC_ALL": true, "TZ": true, "TMPDIR": true, "TERM": true}

// markerEnv names the variable that marks every process of a job, so
// that cancelling the job finds the processes its steps left behind.
const markerEnv = "FORGEAPI_ACTIONS_JOB"

// config is act's configuration for the job: its runs-on labels on the
// host or on their image, the inputs, secrets and vars, and the event.
func (s Spec) config(job *model.Job) (*runner.Config, error) {
	platform := "-self-hosted"
	if img := s.jobImage(job); img != "" {
		platform = img
	}
	platforms := map[string]string{"ubuntu-latest": platform, "self-hosted": platform}
	for _, l := range job.RunsOn() {
		platforms[strings.ToLower(l)] = platform
	}
	eventPath := filepath.Join(s.Scratch, "event.json")
	payload := s.EventPayload
	if len(payload) == 0 {
		payload = []byte("{}")
	}
	if err := os.WriteFile(eventPath, payload, 0o600); err != nil {
		return nil, err
	}
	marker := filepath.Base(s.Scratch) + "-" + fmt.Sprint(time.Now().UnixNano())
	env := map[string]string{markerEnv: marker}
	inContainer := s.inContainer(job)
	for _, kv := range os.Environ() { // act passes the server's environment to host jobs: keep only the harmless part
		if k, _, _ := strings.Cut(kv, "="); !keptEnv[k] && !inContainer {
			env[k] = ""
		}
	}
	for k, v := range s.Env {
		env[k] = v
	}
	secrets := map[string]string{}
	for k, v := range s.Secrets {
		secrets[k] = v
	}
	if s.Token != "" {
		secrets["GITHUB_TOKEN"] = s.Token
	}
	var matrix map[string]map[string]bool
	if len(s.Matrix) > 0 {
		matrix = map[string]map[string]bool{}
		for k, v := range s.Matrix {
			matrix[k] = map[string]bool{fmt.Sprint(v): true}
		}
	}
	return &runner.Config{
		Actor: s.Actor, Workdir: s.Workdir, EventName: s.Event, EventPath: eventPath,
		ActionCacheDir: filepath.Join(s.Scratch, "cache"), LogOutput: true, Env: env, Inputs: s.Inputs,
		Secrets: secrets, Vars: s.Vars, Token: s.Token, Platforms: platforms, Matrix: matrix,
		ConcurrentJobs: 1, ActionOfflineMode: true, GitHubInstance: "github.com",
		// Containers: the Docker socket is not given to jobs; the job's
		// container is on the host network (act's default without
		// services), where the server's URLs work; every container is
		// labelled with the job's marker and has it in its environment
		// (killMarked kills its processes from the host).
		ContainerDaemonSocket: "-", BindWorkdir: inContainer, ContainerOptions: s.containerOptions(marker),
	}, nil
}

// recorder is the job's logger (act's JobLoggerFactory): it writes the
// lines act and the steps print to the log and follows the steps from
// the fields act puts on its entries. act's masking of secrets runs
// before it sees an entry; the recorder masks the secrets again.
type recorder struct {
	spec    Spec
	secrets []string
	mu      sync.Mutex
	steps   []Step
	byID    map[string]int
	names   map[string]string // the steps' ids (act's) to their display names
	written int64             // bytes written to the log
	current int               // the step the lines written go to, -1 for none
	// annotations are the workflow commands' (annotations.go), perStep
	// their count per step and level.
	annotations []Annotation
	perStep     map[string]int
}

func newRecorder(s Spec) *recorder {
	r := &recorder{spec: s, byID: map[string]int{}, names: map[string]string{}, current: -1, perStep: map[string]int{}}
	for _, v := range s.Secrets {
		if v != "" {
			r.secrets = append(r.secrets, v)
		}
	}
	for _, v := range append([]string{s.Token}, s.Masks...) {
		if v != "" {
			r.secrets = append(r.secrets, v)
		}
	}
	return r
}

// WithJobLogger makes the job's logger (act calls it once per job).
func (r *recorder) WithJobLogger() *logrus.Logger {
	l := logrus.New()
	l.SetOutput(io.Discard)
	l.SetLevel(logrus.DebugLevel)
	l.SetFormatter(r)
	return l
}

// Format records the entry's step change and writes its line when it is
// shown (info and above, and the steps' output); act discards what it
// returns (the logger's output is io.Discard).
func (r *recorder) Format(e *logrus.Entry) ([]byte, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.follow(e, now)
	r.annotate(e)
	if e.Level > logrus.InfoLevel || r.spec.Log == nil {
		return nil, nil
	}
	msg := strings.TrimRight(e.Message, "\r\n")
	for _, v := range r.secrets {
		msg = strings.ReplaceAll(msg, v, "***")
	}
	for _, line := range strings.Split(msg, "\n") {
		n, _ := fmt.Fprintf(r.spec.Log, "%s %s\n", now.UTC().Format("2006-01-02T15:04:05.0000000Z"), strings.TrimRight(line, "\r"))
		r.written += int64(n)
	}
	if r.current >= 0 {
		r.steps[r.current].LogTo = r.written
	}
	return nil, nil
}

func (r *recorder) now() time.Time {
	if r.spec.Now != nil {
		return r.spec.Now()
	}
	return time.Now()
}

// follow starts a step at its first entry and ends it at the entry that
// carries its result.
func (r *recorder) follow(e *logrus.Entry, now time.Time) {
	id, name := stepOf(e)
	if id == "" {
		return
	}
	i, ok := r.byID[id]
	if !ok {
		if stage, _ := e.Data["stage"].(string); stage != "" && stage != "Main" {
			return // pre and post steps belong to their main step
		}
		if display, ok := r.names[id]; ok {
			name = display
		}
		r.steps = append(r.steps, Step{Number: len(r.steps) + 1, Name: name, Status: "in_progress", StartedAt: now,
			LogFrom: r.written, LogTo: r.written})
		i = len(r.steps) - 1
		r.byID[id] = i
		r.current = i
		r.notify(r.steps[i])
	}
	result, ok := e.Data["stepResult"]
	if stage, _ := e.Data["stage"].(string); !ok || (stage != "" && stage != "Main") || r.steps[i].Status == "completed" {
		return
	}
	r.steps[i].Status, r.steps[i].Conclusion, r.steps[i].CompletedAt = "completed", fmt.Sprint(result), now
	r.notify(r.steps[i])
}

func (r *recorder) notify(s Step) {
	if r.spec.OnStep != nil {
		r.spec.OnStep(s)
	}
}

// stepOf reads the step an entry is about: act's "stepID" (or "stepid"
// for the set up and complete steps) and "step" fields.
func stepOf(e *logrus.Entry) (id, name string) {
	raw, ok := e.Data["stepID"]
	if !ok {
		raw = e.Data["stepid"]
	}
	ids, _ := raw.([]string)
	if len(ids) != 1 { // composite actions' inner steps have longer paths
		return "", ""
	}
	name, _ = e.Data["step"].(string)
	switch ids[0] {
	case "--setup-job":
		name = "Set up job"
	case "--complete-job":
		name = "Complete job"
	}
	return ids[0], name
}

// finish ends the steps left in progress (cancelled, or failed when the
// job ended on its own) and returns them all.
func (r *recorder) finish(cancelled bool) []Step {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	for i := range r.steps {
		if r.steps[i].Status != "completed" {
			r.steps[i].Status, r.steps[i].CompletedAt = "completed", now
			r.steps[i].Conclusion = Failure
			if cancelled {
				r.steps[i].Conclusion = Cancelled
			}
		}
	}
	return append([]Step(nil), r.steps...)
}

// killMarked kills every process whose environment carries the job's
// marker (Linux: read from /proc; elsewhere nothing is found).
func killMarked(marker string) {
	if marker == "" {
		return
	}
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return
	}
	want := []byte(markerEnv + "=" + marker + "\x00")
	self := os.Getpid()
	for _, e := range entries {
		var pid int
		if _, err := fmt.Sscan(e.Name(), &pid); err != nil || pid == self {
			continue
		}
		env, err := os.ReadFile(filepath.Join("/proc", e.Name(), "environ"))
		if err != nil || !bytes.Contains(append(env, 0), want) {
			continue
		}
		if p, err := os.FindProcess(pid); err == nil {
			_ = p.Kill()
		}
	}
}

// ErrNoJob is returned for a job key the workflow does not have.
var ErrNoJob = errors.New("engine: no such job")

// injectNeeds gives act the results of the jobs the job needs, and
// success to the jobs these need in turn (act's success() reads every
// need, transitively; the server runs a job only once its needs
// succeeded, so theirs did too).
func injectNeeds(wf *model.Workflow, key string, needs map[string]Need) {
	seen := map[string]bool{}
	var walk func(k string)
	walk = func(k string) {
		j := wf.GetJob(k)
		if j == nil {
			return
		}
		for _, n := range j.Needs() {
			if seen[n] {
				continue
			}
			seen[n] = true
			if d := wf.GetJob(n); d != nil {
				d.Result = Success
			}
			walk(n)
		}
	}
	walk(key)
	for k, n := range needs {
		if j := wf.GetJob(k); j != nil {
			j.Result, j.Outputs = n.Result, n.Outputs
		}
	}
}

// AppendError appends an error line (a log line's timestamp and
// ##[error], as the platform's runner writes them) to a job's log file,
// making the file when there is none.
func AppendError(logFile, message string) error {
	f, err := os.OpenFile(logFile, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(f, "%s ##[error]%s\n", time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z"), message)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// withHostServices starts the services of a job that runs on the host
// and returns the workflow and the job read again with the services'
// context written into its expressions, and the variables these read
// (withServicesContext).
func (s *Spec) withHostServices(ctx context.Context, job *model.Job, marker string) (*model.Workflow, *model.Job, map[string]string, error) {
	services, err := startHostServices(ctx, *s, job, marker)
	if err != nil {
		return nil, nil, nil, err
	}
	text, env := withServicesContext(s.Workflow, services)
	wf, err := model.ReadWorkflow(bytes.NewReader(text), false)
	if err != nil {
		return nil, nil, nil, err
	}
	job = wf.GetJob(s.JobKey)
	if job == nil {
		return nil, nil, nil, fmt.Errorf("%w: %q", ErrNoJob, s.JobKey)
	}
	job.Services = nil // started: act runs the job on the host
	injectNeeds(wf, s.JobKey, s.Needs)
	s.Workflow = text
	return wf, job, env, nil
}
