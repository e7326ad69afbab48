package checks

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/apps"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Service stores check suites and runs and emits their events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	// Apps finds the installations whose apps subscribe to check_suite
	// (PushSink).
	Apps *apps.Service
	// Repos opens the repositories' git data (the heads of pull requests
	// from forks).
	Repos *repos.Service
	// appJSON caches each app's integration object and callers each
	// installation's Caller (NewService makes them; nil reads every
	// time): every check run write and answer shows its app.
	appJSON *store.ReadCache[appKey, any]
	callers *store.ReadCache[int64, Caller]
}

// appTables are the tables the cached apps and callers are read from.
var appTables = []string{"apps", "app_installations", "accounts"}

// NewService returns a Service with its caches, made when the server
// starts so that they watch every write to the apps' tables.
func NewService(db *store.DB, bus *events.Bus, appsService *apps.Service, reposService *repos.Service) *Service {
	return &Service{DB: db, Events: bus, Apps: appsService, Repos: reposService,
		appJSON: store.NewReadCache[appKey, any](db, 0, appTables...),
		callers: store.NewReadCache[int64, Caller](db, 0, appTables...)}
}

// newView returns a view of the repository's checks reading with q.
func (s *Service) newView(ctx context.Context, q store.Q, repo *repos.Repository) *view {
	v := newView(ctx, q, repo)
	v.cache = s.appJSON
	return v
}

// CallerOf returns the app of the installation and the installation
// token's bot account.
func (s *Service) CallerOf(ctx context.Context, installationID, botID int64) (Caller, error) {
	load := func() (Caller, error) {
		app, err := apps.ByInstallation(ctx, s.DB, installationID)
		if err != nil {
			return Caller{}, err
		}
		bot, err := accounts.ByID(ctx, s.DB, botID)
		if err != nil {
			return Caller{}, err
		}
		return Caller{App: app, InstallationID: installationID, Bot: bot}, nil
	}
	if s.callers == nil {
		return load()
	}
	c, err := s.callers.Get(installationID, load)
	if err == nil && c.Bot.ID != botID {
		return load()
	}
	return c, err
}

// Head is the commit a suite checks: its SHA, the branch that names it
// (nil for none) and its simple-commit object.
type Head struct {
	SHA    string
	Branch *string
	Commit json.RawMessage
	// Before and After are the push's, for a suite a push created.
	Before, After *string
}

// Caller is the app that writes checks with one of its installation's
// tokens, and its bot (the events' sender).
type Caller struct {
	App            *apps.App
	InstallationID int64
	Bot            *accounts.Account
}

// CreateRun stores a new run of the caller's app on the head commit (in
// the app's suite of it, made when missing) with the input's fields and
// annotations, emits check_run created (and completed when it is), and
// rolls its suite up.
func (s *Service) CreateRun(ctx context.Context, repo *repos.Repository, c Caller, head Head, in RunInput) (*Run, error) {
	r, _, err := s.createRun(ctx, repo, c, head, in)
	return r, err
}

// createRun is CreateRun, also returning the view it rendered the events
// with (reading through the transaction, which is over).
func (s *Service) createRun(ctx context.Context, repo *repos.Repository, c Caller, head Head, in RunInput) (*Run, *view, error) {
	now := store.Now()
	var v *view
	r := &Run{RepoID: repo.ID, AppID: c.App.ID, HeadSHA: head.SHA, Status: StatusQueued, StartedAt: &now,
		CreatedAt: now}
	annotations, err := in.apply(r, true, now)
	if err != nil {
		return nil, nil, err
	}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		suite, err := s.ensureSuite(ctx, tx, repo, c.App.ID, head, now)
		if err != nil {
			return err
		}
		r.SuiteID = suite.ID
		if err := insertRun(ctx, tx, r); err != nil {
			return err
		}
		if err := insertAnnotations(ctx, tx, r.ID, annotations); err != nil {
			return err
		}
		v = s.newView(ctx, tx, repo)
		if err := s.emitRun(ctx, tx, v, "created", r, suite, c.Bot, nil); err != nil {
			return err
		}
		if r.Completed() {
			if err := s.emitRun(ctx, tx, v, "completed", r, suite, c.Bot, nil); err != nil {
				return err
			}
		}
		return s.rollUp(ctx, tx, v, suite, c.Bot, now)
	})
	if err != nil {
		return nil, nil, err
	}
	return r, v, nil
}

// UpdateRun changes the caller's run with the input: fields sent replace
// the stored ones, annotations are appended. It emits check_run
// completed when the run completes, and rolls its suite up. Another
// app's run is a 403.
func (s *Service) UpdateRun(ctx context.Context, repo *repos.Repository, c Caller, id int64, in RunInput) (*Run, error) {
	r, _, err := s.updateRun(ctx, repo, c, id, in)
	return r, err
}

// updateRun is UpdateRun, also returning the view it rendered the events
// with (reading through the transaction, which is over).
func (s *Service) updateRun(ctx context.Context, repo *repos.Repository, c Caller, id int64, in RunInput) (*Run, *view, error) {
	var r *Run
	var v *view
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var err error
		if r, err = RunByID(ctx, tx, repo.ID, id); err != nil {
			return err
		}
		if r.AppID != c.App.ID {
			return apierr.Forbidden("Invalid app_id `%d` - check run can only be modified by the GitHub App that created it.", c.App.ID)
		}
		wasCompleted, oldName := r.Completed(), r.Name
		now := store.Now()
		annotations, err := in.apply(r, false, now)
		if err != nil {
			return err
		}
		r.UpdatedAt = now
		if err := updateRun(ctx, tx, r); err != nil {
			return err
		}
		if r.Name != oldName {
			if err := markLatest(ctx, tx, r.SuiteID, oldName); err != nil {
				return err
			}
			if err := markLatest(ctx, tx, r.SuiteID, r.Name); err != nil {
				return err
			}
		}
		if err := insertAnnotations(ctx, tx, r.ID, annotations); err != nil {
			return err
		}
		suite, err := SuiteByID(ctx, tx, repo.ID, r.SuiteID)
		if err != nil {
			return err
		}
		v = s.newView(ctx, tx, repo)
		if r.Completed() && !wasCompleted {
			if err := s.emitRun(ctx, tx, v, "completed", r, suite, c.Bot, nil); err != nil {
				return err
			}
		}
		return s.rollUp(ctx, tx, v, suite, c.Bot, now)
	})
	if err != nil {
		return nil, nil, err
	}
	return r, v, nil
}

// RerequestRun asks the run's app to run it again: check_run
// rerequested to the app, and its suite queued again with no
// conclusion; the run itself is unchanged. A run not completed is a
// 422, as the platform answers a run that is not rerequestable.
func (s *Service) RerequestRun(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := RunByID(ctx, tx, repo.ID, id)
		if err != nil {
			return err
		}
		if !r.Completed() {
			return apierr.Unprocessable("This check run is not rerequestable")
		}
		suite, err := SuiteByID(ctx, tx, repo.ID, r.SuiteID)
		if err != nil {
			return err
		}
		if err := s.requeue(ctx, tx, suite); err != nil {
			return err
		}
		return s.emitRun(ctx, tx, s.newView(ctx, tx, repo), "rerequested", r, suite, actor, nil)
	})
}

// RequestAction records that actor pressed the run's action with the
// identifier: check_run requested_action to the run's app, with
// requested_action.identifier. An identifier the run does not offer is a
// 422.
func (s *Service) RequestAction(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64, identifier string) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		r, err := RunByID(ctx, tx, repo.ID, id)
		if err != nil {
			return err
		}
		if !slices.ContainsFunc(r.Actions, func(a Action) bool { return a.Identifier == identifier }) {
			return apierr.Custom("CheckRun", "identifier", "The check run offers no action %q", identifier)
		}
		suite, err := SuiteByID(ctx, tx, repo.ID, r.SuiteID)
		if err != nil {
			return err
		}
		return s.emitRun(ctx, tx, s.newView(ctx, tx, repo), "requested_action", r, suite, actor,
			map[string]any{"identifier": identifier})
	})
}

// CreateSuite makes the caller's app's suite of the head commit, and
// reports whether it is new (false: the existing one is returned).
func (s *Service) CreateSuite(ctx context.Context, repo *repos.Repository, c Caller, head Head) (*Suite, bool, error) {
	var suite *Suite
	created := false
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		now := store.Now()
		suite = &Suite{RepoID: repo.ID, AppID: c.App.ID, HeadSHA: head.SHA, HeadBranch: head.Branch,
			HeadCommit: head.Commit, Status: StatusQueued, CreatedAt: now}
		var err error
		if created, err = insertSuite(ctx, tx, suite); err != nil || created {
			return err
		}
		suite, err = suiteOf(ctx, tx, repo.ID, c.App.ID, head.SHA)
		return err
	})
	return suite, created, err
}

// RerequestSuite queues the suite again (no conclusion) and sends its
// app check_suite rerequested.
func (s *Service) RerequestSuite(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		suite, err := SuiteByID(ctx, tx, repo.ID, id)
		if err != nil {
			return err
		}
		if err := s.requeue(ctx, tx, suite); err != nil {
			return err
		}
		return s.emitSuite(ctx, tx, s.newView(ctx, tx, repo), "rerequested", suite, actor, true)
	})
}

// SetPreferences stores the apps' automatic suite creation in the
// repository and returns every setting it has. An app that does not
// exist is a 422.
func (s *Service) SetPreferences(ctx context.Context, repo *repos.Repository, list []Preference) ([]Preference, error) {
	var out []Preference
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		for _, p := range list {
			if _, err := apps.ByID(ctx, tx, p.AppID); errors.Is(err, store.ErrNotFound) {
				return apierr.Custom("CheckSuitePreference", "app_id", "App with id %d does not exist", p.AppID)
			} else if err != nil {
				return err
			}
			if err := setPreference(ctx, tx, repo.ID, p); err != nil {
				return err
			}
		}
		var err error
		out, err = preferences(ctx, tx, repo.ID)
		return err
	})
	return out, err
}

// Preferences returns the repository's settings.
func (s *Service) Preferences(ctx context.Context, repoID int64) ([]Preference, error) {
	return preferences(ctx, s.DB, repoID)
}

// ensureSuite returns the app's suite of the head, made when missing.
func (s *Service) ensureSuite(ctx context.Context, tx *store.Tx, repo *repos.Repository, appID int64, head Head, now time.Time) (*Suite, error) {
	suite, err := suiteOf(ctx, tx, repo.ID, appID, head.SHA)
	if !errors.Is(err, store.ErrNotFound) {
		return suite, err
	}
	suite = &Suite{RepoID: repo.ID, AppID: appID, HeadSHA: head.SHA, HeadBranch: head.Branch, Before: head.Before,
		After: head.After, HeadCommit: head.Commit, Status: StatusQueued, CreatedAt: now}
	created, err := insertSuite(ctx, tx, suite)
	if err != nil || created {
		return suite, err
	}
	return suiteOf(ctx, tx, repo.ID, appID, head.SHA)
}

// requeue sets the suite queued with no conclusion.
func (s *Service) requeue(ctx context.Context, tx *store.Tx, suite *Suite) error {
	suite.Status, suite.Conclusion = StatusQueued, nil
	return setSuiteState(ctx, tx, suite, store.Now())
}

// rollUp sets the suite's status and conclusion from its latest runs,
// and emits check_suite completed when it completes. It locks the suite's
// row first and reads its state again: the roll-ups of one suite's runs
// (an app completing two runs at once) run one after another, each
// seeing the runs the ones before it committed; on PostgreSQL each would
// otherwise see the other run in progress and leave the suite so.
func (s *Service) rollUp(ctx context.Context, tx *store.Tx, v *view, suite *Suite, actor *accounts.Account, now time.Time) error {
	err := tx.QueryRowContext(ctx, `SELECT status, conclusion FROM check_suites WHERE id = $1`+tx.ForUpdate(),
		suite.ID).Scan(&suite.Status, &suite.Conclusion)
	if err != nil {
		return store.Normalize(err)
	}
	runs, err := latestRunsOfSuite(ctx, tx, suite.ID)
	if err != nil {
		return err
	}
	status, conclusion := rollUpOf(runs)
	if status == suite.Status && equalPtr(conclusion, suite.Conclusion) {
		return nil
	}
	suite.Status, suite.Conclusion = status, conclusion
	if err := setSuiteState(ctx, tx, suite, now); err != nil {
		return err
	}
	if status != StatusCompleted {
		return nil
	}
	return s.emitSuite(ctx, tx, v, "completed", suite, actor, false)
}

// conclusionRank orders the conclusions a suite takes from its runs: the
// first one any run has wins; a suite of runs that all succeeded, were
// neutral or skipped is a success when one succeeded.
var conclusionRank = []string{ConclusionActionRequired, ConclusionFailure, ConclusionTimedOut, ConclusionCancelled,
	"stale", ConclusionSuccess, ConclusionNeutral, ConclusionSkipped}

// rollUpOf is the status and conclusion of a suite whose latest runs are
// runs: queued with none, queued or in progress while one is not
// completed, else completed with the conclusion of conclusionRank.
func rollUpOf(runs []*Run) (string, *string) {
	if len(runs) == 0 {
		return StatusQueued, nil
	}
	incomplete, started := false, false
	for _, r := range runs {
		incomplete = incomplete || !r.Completed()
		started = started || r.Status != StatusQueued
	}
	status := StatusCompleted
	switch {
	case incomplete && started:
		status = StatusInProgress
	case incomplete:
		status = StatusQueued
	}
	if status != StatusCompleted {
		return status, nil
	}
	for _, c := range conclusionRank {
		for _, r := range runs {
			if r.Conclusion != nil && *r.Conclusion == c {
				return status, &c
			}
		}
	}
	return status, nil
}

func equalPtr(a, b *string) bool {
	return a == nil && b == nil || a != nil && b != nil && *a == *b
}
