package actions

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/actions/engine"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Pull requests from forks, as the platform runs them: into a public
// repository they run with a read-only GITHUB_TOKEN and no secrets or
// variables, once approved when the repository's approval policy asks
// it of their author; into a private repository only when its
// fork-pr-workflows-private-repos setting (bounded by its organization's
// and enterprise's) enables it, with a write token, secrets and
// variables only when it says so, and approval when it requires it. A
// run that waits for approval is created completed with conclusion
// action_required and no jobs; Approve queues its jobs.

// ForkRunPolicy says how a pull request from a fork runs in a
// repository (RunSettings.ForkRunPolicy).
type ForkRunPolicy struct {
	Private         bool   // the repository is private
	Run             bool   // its fork pull requests run workflows
	WriteToken      bool   // private: the GITHUB_TOKEN keeps its write permissions
	Secrets         bool   // private: secrets and variables are given
	RequireApproval bool   // private: every run needs approval
	ApprovalPolicy  string // public: first_time_contributors_new_to_github | first_time_contributors | all_external_contributors
}

// RunSettings are the Actions settings that shape runs beyond Policies:
// the settings area implements it; nil runs no fork pull request, lets
// every registered runner take jobs and gives OIDC subjects the default
// claim keys.
type RunSettings interface {
	// SelfHostedAllowed reports whether the repository's jobs may run on
	// registered (self-hosted) runners.
	SelfHostedAllowed(ctx context.Context, repoID int64) (bool, error)
	// ForkRunPolicy is how pull requests from forks run in the
	// repository; it reads through q, the caller's transaction when it
	// has one.
	ForkRunPolicy(ctx context.Context, q store.Q, repoID int64) (ForkRunPolicy, error)
	// SubjectClaimKeys are the claim keys of the OIDC tokens' subject.
	SubjectClaimKeys(ctx context.Context, repoID int64) ([]string, error)
}

// ConclusionActionRequired is the conclusion of a run that waits for
// approval.
const ConclusionActionRequired = "action_required"

// newAccountAge is how young an account is "new to the platform" for
// the first_time_contributors_new_to_github policy.
const newAccountAge = 30 * 24 * time.Hour

// forkPolicy is the policy of a fork's pull request into repo; false when
// it does not run. It reads through q, the caller's transaction when it
// has one.
func (s *Service) forkPolicy(ctx context.Context, q store.Q, repo *repos.Repository) (ForkRunPolicy, bool, error) {
	if s.Settings == nil {
		return ForkRunPolicy{}, false, nil
	}
	pol, err := s.Settings.ForkRunPolicy(ctx, q, repo.ID)
	return pol, err == nil && pol.Run, err
}

// needsApproval reports whether the author's fork pull request's run
// waits for approval under pol: in a private repository when pol
// requires it; in a public one never for authors with write access, and
// otherwise by the policy: always (all_external_contributors), for
// authors with no merged pull request in the repository
// (first_time_contributors), and for those whose account is also younger
// than newAccountAge (first_time_contributors_new_to_github).
func (s *Service) needsApproval(ctx context.Context, q store.Q, repo *repos.Repository, author *accounts.Account,
	pol ForkRunPolicy) (bool, error) {
	if pol.Private {
		return pol.RequireApproval, nil
	}
	if author == nil {
		return true, nil
	}
	role, err := access.UserRepoRole(ctx, q, author, repo)
	if err != nil && !errors.Is(err, store.ErrNotFound) {
		return false, err
	}
	if role >= auth.RoleWrite {
		return false, nil
	}
	if pol.ApprovalPolicy == "all_external_contributors" {
		return true, nil
	}
	var merged int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM pull_requests p JOIN issues i ON i.id = p.issue_id
		WHERE i.repository_id = $1 AND i.user_id = $2 AND p.merged_at IS NOT NULL`, repo.ID, author.ID).Scan(&merged); err != nil {
		return false, store.Normalize(err)
	}
	if merged > 0 {
		return false, nil
	}
	if pol.ApprovalPolicy == "first_time_contributors_new_to_github" {
		return time.Since(author.CreatedAt) < newAccountAge, nil
	}
	return true, nil
}

// forkPR reports whether the run's event is a pull request from another
// repository than the run's.
func forkPR(r *Run) bool {
	if r.Event != "pull_request" {
		return false
	}
	var p struct {
		PullRequest struct {
			Head struct {
				Repo *struct {
					ID int64 `json:"id"`
				} `json:"repo"`
			} `json:"head"`
		} `json:"pull_request"`
	}
	if json.Unmarshal(r.EventPayload, &p) != nil {
		return false
	}
	h := p.PullRequest.Head.Repo
	return h == nil || h.ID != r.RepoID
}

// forkLimits narrows a fork pull request's job: a read-only token unless
// its private repository sends write tokens, no secrets or variables
// unless it sends them.
func (s *Service) forkLimits(ctx context.Context, r *Run, spec *engine.Spec, grant auth.Grant) (auth.Grant, error) {
	if !forkPR(r) {
		return grant, nil
	}
	pol := ForkRunPolicy{}
	if s.Settings != nil {
		var err error
		if pol, err = s.Settings.ForkRunPolicy(ctx, s.DB, r.RepoID); err != nil {
			return nil, err
		}
	}
	if !pol.Private || !pol.Secrets {
		spec.Secrets, spec.Vars = map[string]string{}, map[string]string{}
	}
	if pol.Private && pol.WriteToken {
		return grant, nil
	}
	out := auth.Grant{}
	for name := range grant {
		out[name] = auth.Read
	}
	return out, nil
}

// errNotAwaitingApproval is Approve's answer for a run that waits for no
// approval.
var errNotAwaitingApproval = errors.New("this run is not waiting for approval")

// Approve queues the jobs of a fork pull request's run that waits for
// approval (conclusion action_required), as actor: errNotAwaitingApproval
// when it does not wait.
func (s *Service) Approve(ctx context.Context, runID, repoID int64, actor *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := runByID(ctx, tx, repoID, runID)
		if err != nil {
			return err
		}
		if r.Status != StatusCompleted || r.Conclusion == nil || *r.Conclusion != ConclusionActionRequired {
			return errNotAwaitingApproval
		}
		repo, err := repos.ByID(ctx, tx, r.RepoID)
		if err != nil {
			return err
		}
		parsed, err := engine.ParseWith([]byte(r.WorkflowFile), s.resolver(ctx, tx, repo, r.HeadSHA, r.WorkflowPath))
		if err != nil {
			return &InvalidWorkflowError{Message: err.Error()}
		}
		r.Status, r.Conclusion = StatusQueued, nil
		if err := setRunState(ctx, tx, r, tx.Now()); err != nil {
			return err
		}
		if err := s.emitRun(ctx, tx, "requested", r, actor); err != nil {
			return err
		}
		return s.queueJobs(ctx, tx, r, parsed.Jobs, nil, actor)
	})
}
