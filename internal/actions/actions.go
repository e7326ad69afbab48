// Package actions is the run machinery of GitHub Actions: the workflows
// found under .github/workflows in pushed commits, the runs their
// triggers (push, pull_request, workflow_dispatch, repository_dispatch,
// workflow_run, schedule through the leased Scheduler) make, each run a
// check suite of the built-in github-actions app and each job a check
// run of it (checks.go), the jobs of each
// run attempt (the matrix expanded, needs ordered), the built-in runner
// that claims jobs with a lease and executes them on the server's host
// (internal/actions/engine, nektos/act), their logs in blob storage, and
// the REST API under /repos/{owner}/{repo}/actions/ (workflows, runs,
// attempts, jobs, logs, cancel, rerun, artifacts, caches), the results
// service jobs upload artifacts and save caches through (runtime.go,
// uploads.go: the official clients' twirp protocol; Handler.Register
// mounts it), the GITHUB_TOKEN's permissions (permissions.go), with the
// workflow_run,
// workflow_job and workflow_dispatch events emitted in each change's
// transaction.
//
// Secrets, variables, runners' registration and Actions permissions are
// not here (internal/actions/settings); their values reach jobs through
// the Values interface.
package actions

import (
	"context"
	"encoding/json"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/actions/engine"
	"forgeapi/internal/blob"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/secretbox"
	"forgeapi/internal/store"
)

// Statuses and conclusions of runs, attempts and jobs.
const (
	StatusQueued     = "queued"
	StatusInProgress = "in_progress"
	StatusCompleted  = "completed"
	StatusWaiting    = "waiting"

	Success   = "success"
	Failure   = "failure"
	Cancelled = "cancelled"
	Skipped   = "skipped"
)

// Workflow states.
const (
	StateActive           = "active"
	StateDisabledManually = "disabled_manually"
)

// Values gives a job the secrets and variables of its repository (and
// environment, "" for none). The settings area implements it; without
// one jobs get none.
type Values interface {
	RunValues(ctx context.Context, repoID int64, environment string) (secrets, variables map[string]string, err error)
}

// Service holds the workflows, runs and jobs.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	Repos  *repos.Service
	// Blobs stores the jobs' logs (set once the server knows its base
	// URL); nil keeps no logs.
	Blobs blob.Store
	// Values gives jobs their secrets and variables; nil gives none.
	Values Values
	// Policies gives runs their repository's default GITHUB_TOKEN
	// permissions and retention; nil: the platform's defaults.
	Policies Policies
	// Settings says how fork pull requests run, which repositories'
	// jobs registered runners take and the OIDC subjects' claim keys;
	// nil: no fork pull request runs (forks.go).
	Settings RunSettings
	// Box seals the OIDC signing key at rest; nil keeps it in the clear.
	Box *secretbox.Box
	// Environments gates the jobs that name an environment; nil lets
	// them run.
	Environments Environments
	// Gates holds the jobs of protected environments before they are
	// claimed (gates.go); nil holds none.
	Gates Gates
	// BaseURL is the API's base URL, for the objects that background work
	// renders in events (set once the server listens).
	BaseURL string
	// Wake, when set, is called after a commit that queued jobs.
	Wake func()
	// running cancels the jobs this process runs (see cancelRunning).
	running *runningJobs
	// Runners authenticates registered runners (forgeapi runner) by their
	// credential; nil: no runner but the built-in one takes jobs.
	Runners Runners
	// Lease is how long a claimed job stays its runner's without a
	// renewal (default 30 s); runners renew every Lease/10.
	Lease time.Duration
	// queued tells the registered runners waiting for a job that jobs
	// were queued.
	queued *broadcast
	// CheckEvents sends the events of the runs' checks; nil sends none.
	CheckEvents CheckEvents
	// Now is the clock of the schedules (nil: the system's).
	Now func() time.Time
	// CacheLimit is how many bytes of committed cache entries a
	// repository keeps when neither it nor its enterprise set a cache
	// usage policy (default DefaultCacheLimitGB gigabytes, the platform's): a
	// commit that goes over evicts the least recently used others.
	CacheLimit int64
	// CacheGB is how many bytes one gigabyte of the cache usage policies
	// counts (default 1 GiB; tests make it small).
	CacheGB int64
	// app caches the github-actions app's id (checks.go).
	app appCache
}

// NewService returns the service of the repositories in reposService.
func NewService(db *store.DB, bus *events.Bus, reposService *repos.Service) *Service {
	return &Service{DB: db, Events: bus, Repos: reposService, running: newRunningJobs(), queued: newBroadcast()}
}

// Workflow is a workflow file of a repository, as last seen in a push.
type Workflow struct {
	ID        int64
	RepoID    int64
	Path      string
	Name      string
	State     string
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Run is a workflow run, with its latest attempt's state.
type Run struct {
	ID                int64
	RepoID            int64
	WorkflowID        int64
	RunNumber         int64
	RunAttempt        int
	Name              string
	DisplayTitle      string
	Event             string
	Status            string
	Conclusion        *string
	HeadSHA           string
	HeadBranch        *string
	ActorID           *int64
	TriggeringActorID *int64
	WorkflowFile      string
	EventPayload      json.RawMessage
	Inputs            map[string]string
	HeadCommit        json.RawMessage
	Error             string
	RunStartedAt      time.Time
	CreatedAt         time.Time
	UpdatedAt         time.Time
	WorkflowPath      string // of its workflow (joined)
	// CheckSuiteID is the run's check suite (nil until it is made).
	CheckSuiteID *int64
}

// Job is one job of a run attempt.
type Job struct {
	ID          int64
	RunID       int64
	RepoID      int64
	RunAttempt  int
	Key         string
	Name        string
	Matrix      map[string]any
	Needs       []string
	Labels      []string
	Steps       []Step
	Outputs     map[string]string
	Status      string
	Conclusion  *string
	StartedAt   *time.Time
	CompletedAt *time.Time
	CreatedAt   time.Time
	RunnerName  *string
	HasLog      bool
	// RunnerID, RunnerGroupID and RunnerGroupName are the registered
	// runner that took the job and its group (nil for the built-in
	// runner, and the group for a repository's runner).
	RunnerID        *int64
	RunnerGroupID   *int64
	RunnerGroupName *string
	// RunnerStarted is set once its runner started the job: a job whose
	// lease runs out before is queued again, one started is failed.
	RunnerStarted bool
	// CheckRunID is the job's check run (nil until it is made).
	CheckRunID *int64
	// Environment is the environment the job deploys to ("" for none),
	// and DeploymentID the deployment made for it once it ran.
	Environment  string
	DeploymentID *int64
	// WorkflowFile is, for a job of a called reusable workflow (its Key
	// CALLER/CALLEE), that workflow's content; "" for the others.
	WorkflowFile string
	// Callers are a called job's caller jobs, outermost first (see
	// engine.Call); nil for the others (and for the jobs stored before
	// chains were kept: one caller, the key's first part).
	Callers []engine.Caller
}

// Step is a step of a job (the platform's job step).
type Step struct {
	Name        string     `json:"name"`
	Status      string     `json:"status"`
	Conclusion  *string    `json:"conclusion"`
	Number      int        `json:"number"`
	StartedAt   *time.Time `json:"started_at"`
	CompletedAt *time.Time `json:"completed_at"`
	// LogFrom and LogTo are the step's part of its job's log, in bytes
	// (stored, not shown).
	LogFrom int64 `json:"log_from,omitempty"`
	LogTo   int64 `json:"log_to,omitempty"`
}

// actorOf is the account of an id, nil for none.
func actorOf(ctx context.Context, q store.Q, id *int64) (*accounts.Account, error) {
	if id == nil {
		return nil, nil
	}
	a, err := accounts.ByID(ctx, q, *id)
	if err == store.ErrNotFound {
		return nil, nil
	}
	return a, err
}
