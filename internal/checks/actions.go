package checks

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// RunEvent emits check_run with the action (created, completed) about
// the repository's check run, in tx: the events of the check runs that
// Actions writes for its jobs (internal/actions), sent as every app's.
func (s *Service) RunEvent(ctx context.Context, tx *store.Tx, repo *repos.Repository, runID int64, action string,
	actor *accounts.Account) error {
	r, err := RunByID(ctx, tx, repo.ID, runID)
	if err != nil {
		return err
	}
	suite, err := SuiteByID(ctx, tx, repo.ID, r.SuiteID)
	if err != nil {
		return err
	}
	return s.emitRun(ctx, tx, s.newView(ctx, tx, repo), action, r, suite, actor, nil)
}

// SuiteCompleted emits check_suite completed about the repository's
// suite, in tx (the suites of Actions' workflow runs).
func (s *Service) SuiteCompleted(ctx context.Context, tx *store.Tx, repo *repos.Repository, suiteID int64,
	actor *accounts.Account) error {
	suite, err := SuiteByID(ctx, tx, repo.ID, suiteID)
	if err != nil {
		return err
	}
	return s.emitSuite(ctx, tx, s.newView(ctx, tx, repo), "completed", suite, actor, false)
}
