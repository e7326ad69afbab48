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
	// Finished records the job's conclusion on its deployment.
	Finished(ctx context.Context, r *Run, j *Job) error
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
// ended.
func (s *Service) finished(ctx context.Context, r *Run, j *Job) error {
	if j.DeploymentID == nil || s.Environments == nil {
		return nil
	}
	return s.Environments.Finished(ctx, r, j)
}
