package actions

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/actions/runnerproto"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// The registered runners' side of the jobs (`forgeapi runner` on other
// machines): the protocol of internal/actions/runnerproto, on the claim
// path the built-in runner uses (claim.go).

// Runners authenticates registered runners; internal/actions/settings
// implements it.
type Runners interface {
	// RunnerForJobs returns the runner whose credential this is
	// (store.ErrNotFound when none).
	RunnerForJobs(ctx context.Context, credential string) (*RemoteRunner, error)
	// SetRunnerStatus records that the runner is online or going offline,
	// busy or idle.
	SetRunnerStatus(ctx context.Context, id int64, online, busy bool) error
	// BindSession ties an ephemeral runner to the runner process (its
	// session) that claims first; another session's claim is an error
	// (a 409).
	BindSession(ctx context.Context, id int64, session string) error
	// RemoveEphemeral removes the runner if it is ephemeral (its one job
	// ended).
	RemoveEphemeral(ctx context.Context, id int64) error
}

// RemoteRunner is a registered runner as it takes jobs.
type RemoteRunner struct {
	ID     int64
	Name   string
	Labels []string // all its labels: self-hosted, its OS and architecture, custom ones
	// RepoID is a repository's runner's repository, OrgID an
	// organization's runner's organization (the other is 0).
	RepoID, OrgID int64
	// EnterpriseID is an enterprise's runner's enterprise (RepoID and
	// OrgID 0): it serves the repositories of its organizations (Repos).
	EnterpriseID int64
	// GroupID and GroupName are an organization's runner's group.
	GroupID   int64
	GroupName string
	// Repos, when not nil, are the only repositories of the organization
	// its group serves (a group of selected repositories).
	Repos []int64
	// Workflows, when not nil, are the only workflows its group runs
	// (restricted_to_workflows): OWNER/REPO/PATH@REF, the ref a branch,
	// a tag, refs/heads/BRANCH, refs/tags/TAG or a commit SHA.
	Workflows []string
	// Ephemeral runners take one job, and are removed when it ends.
	Ephemeral bool
}

// runsWorkflow reports whether the runner's group lets it run the run's
// jobs: the run's workflow (the caller's, for called jobs) at its ref
// or commit is one of Workflows, when the group is restricted.
func (rr *RemoteRunner) runsWorkflow(repo string, r *Run) bool {
	if rr.Workflows == nil {
		return true
	}
	refs := []string{r.HeadSHA}
	if r.HeadBranch != nil {
		b := *r.HeadBranch
		refs = append(refs, b, "refs/heads/"+b, "refs/tags/"+b)
	}
	for _, w := range rr.Workflows {
		path, ref, ok := strings.Cut(w, "@")
		if !ok || !strings.EqualFold(path, repo+"/"+r.WorkflowPath) {
			continue
		}
		for _, have := range refs {
			if ref == have {
				return true
			}
		}
	}
	return false
}

// serves reports whether the runner takes the repository's jobs.
func (rr *RemoteRunner) serves(repoID int64) bool {
	if rr.Repos == nil {
		return true
	}
	for _, id := range rr.Repos {
		if id == repoID {
			return true
		}
	}
	return false
}

// owner is the lease owner of a claim of the runner: its id and a random
// part, the claim the runner sends back.
func (rr *RemoteRunner) owner() string {
	return "runner-" + itoa(rr.ID) + "-" + wire.NewGUID()
}

// registerRunnerProtocol mounts the protocol's endpoints.
func (s *Service) registerRunnerProtocol(mux interface{ Handle(string, http.Handler) }) {
	for pattern, h := range map[string]remoteHandler{
		"POST " + runnerproto.ClaimPath:   s.remoteClaim,
		"POST " + runnerproto.OfflinePath: s.remoteOffline,
		"POST " + runnerproto.StartPath:   s.remoteJob(s.remoteStart),
		"POST " + runnerproto.RenewPath:   s.remoteJob(s.remoteRenew),
		"GET " + runnerproto.SourcePath:   s.remoteJob(s.remoteSource),
		"POST " + runnerproto.StepPath:    s.remoteJob(s.remoteStep),
		"PUT " + runnerproto.LogPath:      s.remoteJob(s.remoteLog),
		"POST " + runnerproto.FinishPath:  s.remoteJob(s.remoteFinish),
	} {
		mux.Handle(pattern, s.serveRemote(h))
	}
}

// remoteHandler serves one protocol request of an authenticated runner.
type remoteHandler func(w http.ResponseWriter, r *http.Request, rr *RemoteRunner) error

// errRunnerAuth refuses a request without a registered runner's
// credential.
var errRunnerAuth = apierr.Unauthorized("Bad credentials")

// errClaimLost answers a job request whose claim is no longer the
// runner's: the lease ran out (the job was failed or queued again), or
// the job was cancelled (renewals).
var errClaimLost = apierr.New(http.StatusConflict, "This job's claim is not the runner's any more")

// serveRemote authenticates the runner by its credential and serves h,
// errors as the API's JSON errors.
func (s *Service) serveRemote(h remoteHandler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r = r.WithContext(httpapi.WithBaseURL(r.Context(), s.BaseURL))
		var err error = errRunnerAuth
		scheme, cred, _ := strings.Cut(r.Header.Get("Authorization"), " ")
		if s.Runners != nil && strings.EqualFold(scheme, runnerproto.AuthScheme) && cred != "" {
			var rr *RemoteRunner
			rr, err = s.Runners.RunnerForJobs(r.Context(), strings.TrimSpace(cred))
			if errors.Is(err, store.ErrNotFound) {
				err = errRunnerAuth
			} else if err == nil {
				err = h(w, r, rr)
			}
		}
		if err != nil {
			httpapi.WriteError(w, r, err)
		}
	})
}

// remoteClaim answers a claim: 200 with a job the runner takes, waiting
// up to the asked time (runnerproto.MaxWait at most) for one to be
// queued, else 204. Each claim marks the runner online and idle, and a
// job taken busy.
func (s *Service) remoteClaim(w http.ResponseWriter, r *http.Request, rr *RemoteRunner) error {
	var body runnerproto.Claim
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	if rr.Ephemeral {
		if err := s.Runners.BindSession(ctx, rr.ID, body.Session); err != nil {
			return err
		}
	}
	if err := s.runnerSeen(ctx, rr.ID); err != nil {
		return err
	}
	wait := min(time.Duration(body.Wait)*time.Second, runnerproto.MaxWait)
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	poll := time.NewTicker(time.Second) // jobs whose needs completed, gates opened, other servers' queues
	defer poll.Stop()
	for {
		woken := s.queued.wait()
		job, err := s.claimFor(ctx, rr)
		if err != nil || job != nil {
			if err == nil {
				httpapi.WriteJSON(w, http.StatusOK, job)
			}
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-deadline.C:
			httpapi.NoContent(w)
			return nil
		case <-woken:
		case <-poll.C:
		}
	}
}

// claimFor claims a job for the runner and prepares it: a job that
// cannot start (its environment refused it, its token could not be
// made) is failed and the next one claimed. nil when there is none.
func (s *Service) claimFor(ctx context.Context, rr *RemoteRunner) (*runnerproto.Job, error) {
	for {
		c := claimant{owner: rr.owner(), name: rr.Name, lease: s.lease(), runner: rr}
		if rr.Ephemeral {
			if spent, err := s.hadJob(ctx, rr.ID); err != nil || spent {
				return nil, err // its one job was taken
			}
		}
		j, ok, err := s.claimNext(ctx, c)
		if err != nil || !ok {
			return nil, err
		}
		if err := s.Runners.SetRunnerStatus(ctx, rr.ID, true, true); err != nil {
			return nil, err
		}
		job, err := s.remoteJobOf(ctx, c, j)
		if err != nil || job != nil {
			return job, err
		}
	}
}

// remoteJobOf prepares the claimed job for its runner; nil when it could
// not start (it is completed as failed with the reason).
func (s *Service) remoteJobOf(ctx context.Context, c claimant, j *Job) (*runnerproto.Job, error) {
	r, err := runOf(ctx, s.DB, j)
	if err != nil {
		return nil, err
	}
	spec, refusal, err := s.prepare(ctx, r, j)
	if err == nil && refusal == "" {
		var repo *repos.Repository
		if repo, err = repos.ByID(ctx, s.DB, r.RepoID); err == nil {
			return &runnerproto.Job{ID: j.ID, Claim: c.owner, Lease: int(c.lease / time.Second), Repository: repo.FullName(),
				HeadSHA: r.HeadSHA, CloneURL: strings.TrimSuffix(s.BaseURL, "/") + "/" + repo.FullName() + ".git",
				Spec: runnerproto.FromEngine(spec)}, nil
		}
	}
	if err != nil {
		refusal = "The job could not start: " + err.Error()
	}
	if err := s.revokeJobTokens(ctx, j.ID); err != nil {
		return nil, err
	}
	if err := s.saveLog(ctx, j, strings.NewReader(time.Now().UTC().Format("2006-01-02T15:04:05.0000000Z")+" ##[error]"+refusal+"\n")); err != nil {
		return nil, err
	}
	_, err = s.complete(ctx, c.owner, r, j, engine.Result{Conclusion: Failure})
	return nil, err
}

// runnerSeen records that the runner is online, and busy while it holds a
// job (a runner of several slots is idle once none runs).
func (s *Service) runnerSeen(ctx context.Context, id int64) error {
	var n int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM actions_jobs WHERE runner_id = $1 AND status = 'in_progress'`,
		id).Scan(&n); err != nil {
		return store.Normalize(err)
	}
	return s.Runners.SetRunnerStatus(ctx, id, true, n > 0)
}

// hadJob reports whether the runner took a job (an ephemeral runner
// takes one).
func (s *Service) hadJob(ctx context.Context, id int64) (bool, error) {
	var n int
	err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM actions_jobs WHERE runner_id = $1`, id).Scan(&n)
	return n > 0, store.Normalize(err)
}

// remoteOffline marks the runner offline (it stops): 204.
func (s *Service) remoteOffline(w http.ResponseWriter, r *http.Request, rr *RemoteRunner) error {
	if err := s.Runners.SetRunnerStatus(r.Context(), rr.ID, false, false); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// remoteJobHandler serves a request about a job the runner claimed.
type remoteJobHandler func(w http.ResponseWriter, r *http.Request, rr *RemoteRunner, j *Job, claim string) error

// remoteJob resolves the path's job and the request's claim: a 404 for a
// job that is not one of the runner's, a 409 for a claim that is not the
// job's lease any more.
func (s *Service) remoteJob(h remoteJobHandler) remoteHandler {
	return func(w http.ResponseWriter, r *http.Request, rr *RemoteRunner) error {
		id, err := httpapi.PathInt64(r, "job_id")
		if err != nil {
			return err
		}
		j, err := scanJob(s.DB.QueryRowContext(r.Context(), `SELECT `+jobColumns+` FROM actions_jobs WHERE id = $1`, id))
		if err != nil {
			return err
		}
		claim := r.Header.Get(runnerproto.ClaimHeader)
		if j.RunnerID == nil || *j.RunnerID != rr.ID {
			if claim != "" && strings.HasPrefix(claim, "runner-"+itoa(rr.ID)+"-") {
				return errClaimLost // requeued, then taken by another runner
			}
			return store.ErrNotFound
		}
		held, err := s.holds(r.Context(), j.ID, claim)
		if err != nil {
			return err
		}
		if claim == "" || !held {
			return errClaimLost
		}
		return h(w, r, rr, j, claim)
	}
}

// remoteStart marks the job started: 204, or 409 when its lease ran out
// (the runner must not run it).
func (s *Service) remoteStart(w http.ResponseWriter, r *http.Request, _ *RemoteRunner, j *Job, claim string) error {
	ok, err := s.markStarted(r.Context(), j.ID, claim)
	if err != nil {
		return err
	}
	if !ok {
		return errClaimLost
	}
	httpapi.NoContent(w)
	return nil
}

// remoteRenew extends the job's lease: 200 with its length, 409 when it
// was lost or the job's cancel was asked (the runner stops the job, then
// finishes it).
func (s *Service) remoteRenew(w http.ResponseWriter, r *http.Request, rr *RemoteRunner, j *Job, claim string) error {
	ok, err := s.renewLease(r.Context(), j.ID, claim, s.lease())
	if err != nil {
		return err
	}
	if !ok {
		return errClaimLost
	}
	if err := s.runnerSeen(r.Context(), rr.ID); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, runnerproto.Renewal{Lease: int(s.lease() / time.Second)})
	return nil
}

// remoteSource streams a git bundle of the job's repository (every
// reference), which holds the run's commit.
func (s *Service) remoteSource(w http.ResponseWriter, r *http.Request, _ *RemoteRunner, j *Job, _ string) error {
	cmd := gitcmd.In(s.Repos.GitDir(j.RepoID)).Command(r.Context(), "bundle", "create", "-q", "-", "--all")
	w.Header().Set("Content-Type", "application/octet-stream")
	cmd.Stdout = w
	return cmd.Run() // once the bundle started, an error cuts it short: the runner's clone fails
}

// remoteStep records a step's progress: 204.
func (s *Service) remoteStep(w http.ResponseWriter, r *http.Request, _ *RemoteRunner, j *Job, _ string) error {
	var st engine.Step
	if err := httpapi.DecodeJSON(r, &st); err != nil {
		return err
	}
	applyStep(j, st)
	if err := saveJob(r.Context(), s.DB, j); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// remoteLog stores the job's log, the request's body: 204.
func (s *Service) remoteLog(w http.ResponseWriter, r *http.Request, _ *RemoteRunner, j *Job, _ string) error {
	if err := s.saveLog(r.Context(), j, r.Body); err != nil {
		return err
	}
	if _, err := s.DB.ExecContext(r.Context(), `UPDATE actions_jobs SET has_log = $1 WHERE id = $2`, j.HasLog, j.ID); err != nil {
		return store.Normalize(err)
	}
	httpapi.NoContent(w)
	return nil
}

// remoteFinish records how the job ended and revokes its tokens: 204, or
// 409 when the lease was lost meanwhile.
func (s *Service) remoteFinish(w http.ResponseWriter, r *http.Request, rr *RemoteRunner, j *Job, claim string) error {
	var body runnerproto.Finish
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	switch body.Conclusion {
	case Success, Failure, Cancelled:
	default:
		return apierr.Invalid("Job", "conclusion", apierr.CodeInvalid)
	}
	ctx := r.Context()
	if err := s.revokeJobTokens(ctx, j.ID); err != nil { // the tokens end with the job, before it is seen completed
		return err
	}
	run, err := runOf(ctx, s.DB, j)
	if err != nil {
		return err
	}
	done, err := s.complete(ctx, claim, run, j, engine.Result{Conclusion: body.Conclusion, Outputs: body.Outputs, Steps: body.Steps,
		Annotations: body.Annotations})
	if err != nil {
		return err
	}
	if !done {
		return errClaimLost
	}
	if rr.Ephemeral {
		if err := s.Runners.RemoveEphemeral(ctx, rr.ID); err != nil {
			return err
		}
	} else if err := s.runnerSeen(ctx, rr.ID); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}
