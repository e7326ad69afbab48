package actions

import (
	"context"

	"forgeapi/internal/store"
)

// Environments gates the jobs that name an environment (environment:).
// The deployments area implements it; without one such jobs run as any
// other.
type Environments interface {
	// Admit is asked before the job runs: it makes the job's deployment
	// (its id returned) when the environment lets the run's ref deploy,
	// else returns the refusal that fails the job.
	Admit(ctx context.Context, r *Run, j *Job) (deploymentID int64, refusal string, err error)
	// Finished records the job's conclusion on its deployment, before
	// the job is completed.
	Finished(ctx context.Context, r *Run, j *Job, conclusion string) error
}

// admit asks the service's Environments about a job that names an
// environment, and keeps the deployment made for it on the job; refusal
// is what fails the job ("" to run it).
func (s *Service) admit(ctx context.Context, r *Run, j *Job) (refusal string, err error) {
	if j.Environment == "" || s.Environments == nil {
		return "", nil
	}
	id, refusal, err := s.Environments.Admit(ctx, r, j)
	if err != nil || refusal != "" {
		return refusal, err
	}
	j.DeploymentID = &id
	_, err = s.DB.ExecContext(ctx, `UPDATE actions_jobs SET deployment_id = $1 WHERE id = $2`, id, j.ID)
	return "", store.Normalize(err)
}

// finished tells the service's Environments how a job with a deployment
// ended (cancelled when its cancel was asked), before the job is
// completed, so that whoever sees the job completed sees its
// deployment's last status.
func (s *Service) finished(ctx context.Context, r *Run, j *Job, conclusion string) error {
	if j.DeploymentID == nil || s.Environments == nil {
		return nil
	}
	var cancel bool
	if err := s.DB.QueryRowContext(ctx, `SELECT cancel_requested FROM actions_jobs WHERE id = $1`, j.ID).Scan(&cancel); err != nil {
		return store.Normalize(err)
	}
	if cancel {
		conclusion = Cancelled
	}
	return s.Environments.Finished(ctx, r, j, conclusion)
}
