package codescanning

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// Defaults of Config.
const (
	DefaultLease        = 10 * time.Minute
	DefaultPollInterval = time.Minute
)

// Config configures the Processor. Zero fields take the defaults.
type Config struct {
	// Lease is how long a claimed upload stays with this server; one
	// killed or failed mid-way is processed again once it expired.
	// Default DefaultLease.
	Lease time.Duration
	// PollInterval is how often Run looks for uploads no wake announced.
	// Default DefaultPollInterval.
	PollInterval time.Duration
}

// Processor turns pending SARIF uploads into analyses and alerts: a
// leased worker over code_scanning_sarifs.
type Processor struct {
	svc    *Service
	cfg    Config
	owner  string
	logger *slog.Logger
	signal *worker.Signal
}

// NewProcessor returns the Processor of svc's uploads; svc's uploads wake
// it.
func NewProcessor(svc *Service, cfg Config, logger *slog.Logger) *Processor {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	p := &Processor{svc: svc, cfg: cfg, owner: wire.NewGUID(), logger: logger, signal: worker.NewSignal()}
	svc.wake = p.signal.Wake
	return p
}

// Run processes pending uploads at start, when woken, and every
// PollInterval, until ctx is done.
func (p *Processor) Run(ctx context.Context) {
	worker.Loop{Pass: func(ctx context.Context) { p.RunOnce(ctx) }, Interval: p.cfg.PollInterval, Wake: p.signal.C()}.Run(ctx)
}

// RunOnce processes every pending upload it can claim and returns how
// many it processed.
func (p *Processor) RunOnce(ctx context.Context) int {
	n, err := worker.Drain[string](ctx, queue{p}, func(id string, err error) {
		p.logger.Error("code scanning upload", "sarif_id", id, "err", err)
	})
	if err != nil {
		p.logger.Error("claim a code scanning upload", "err", err)
	}
	return n
}

// ReleaseLeases ends now the leases a killed process held and reports
// how many it ended. Only the one server of a database may call it.
func (p *Processor) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(p.svc.DB.ExecContext(ctx, `UPDATE code_scanning_sarifs SET lease_owner = '', lease_until = NULL
		WHERE id IN (SELECT id FROM code_scanning_sarifs WHERE status = 'pending' AND lease_until > $1)`, store.Now()))
}

// queue is code_scanning_sarifs as the Processor's worker.Queue.
type queue struct{ p *Processor }

// Claim leases the oldest pending upload.
func (q queue) Claim(ctx context.Context) (string, bool, error) {
	db := q.p.svc.DB
	now := store.Now()
	var id string
	err := db.QueryRowContext(ctx, `UPDATE code_scanning_sarifs SET lease_owner = $1, lease_until = $2
		WHERE id IN (SELECT id FROM code_scanning_sarifs WHERE status = 'pending' AND (lease_until IS NULL OR lease_until < $3)
			ORDER BY created_at, id LIMIT 1`+db.SkipLocked()+`)
		RETURNING id`, q.p.owner, now.Add(q.p.cfg.Lease), now).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return "", false, nil
	}
	if err != nil {
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return "", false, nil
		}
		return "", false, err
	}
	return id, true, nil
}

// errLeaseLost ends processing whose lease another server took over.
var errLeaseLost = errors.New("codescanning: lease lost")

// Run processes the claimed upload.
func (q queue) Run(ctx context.Context, id string) error { return q.p.process(ctx, id) }

// process parses the upload and, in one transaction that also marks it
// complete (or failed, with the parser's error), writes its analyses,
// alerts and instances and sends their webhooks.
func (p *Processor) process(ctx context.Context, id string) error {
	db := p.svc.DB
	var repoID int64
	var raw string
	var u Upload
	err := db.QueryRowContext(ctx, `SELECT repository_id, sarif, commit_sha, ref, tool_name, uploader_id FROM code_scanning_sarifs
		WHERE id = $1`, id).Scan(&repoID, &raw, &u.CommitSHA, &u.Ref, &u.ToolName, &u.UploaderID)
	if err != nil {
		return store.Normalize(err)
	}
	u.ID, u.RepoID = id, repoID
	repo, err := repos.ByID(ctx, db, repoID)
	if err != nil {
		return err
	}
	var stored storedSARIF
	var runs []Run
	perr := json.Unmarshal([]byte(raw), &stored)
	if perr == nil {
		runs, perr = parseSARIF(stored.Log, stored.CheckoutURI, u.ToolName)
	}
	var uploader *accounts.Account
	if u.UploaderID != nil {
		if uploader, err = accounts.ByID(ctx, db, *u.UploaderID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return db.Tx(ctx, func(tx *store.Tx) error {
		status, errs := "complete", "[]"
		if perr != nil {
			status = "failed"
			b, _ := json.Marshal([]string{perr.Error()})
			errs = string(b)
		}
		n, err := store.Affected(tx.ExecContext(ctx, `UPDATE code_scanning_sarifs SET status = $1, errors = $2, lease_owner = '',
			lease_until = NULL WHERE id = $3 AND lease_owner = $4`, status, errs, id, p.owner))
		if err != nil {
			return fmt.Errorf("finish code scanning upload: %w", store.Normalize(err))
		}
		if n == 0 {
			return errLeaseLost
		}
		for i := range runs {
			if err := p.svc.record(ctx, tx, repo, &u, &runs[i], uploader); err != nil {
				return err
			}
		}
		return nil
	})
}

// record writes one run as an analysis: its results as alerts (new ones
// sent as created) and instances, then the states of the tool's alerts
// (fixed and reopened sent).
func (s *Service) record(ctx context.Context, tx *store.Tx, repo *repos.Repository, u *Upload, run *Run, uploader *accounts.Account) error {
	now := tx.Now()
	an := &Analysis{RepoID: repo.ID, SARIFID: u.ID, Ref: u.Ref, CommitSHA: u.CommitSHA, Category: run.Category, ToolName: run.ToolName,
		ToolVersion: run.ToolVersion, ToolGUID: run.ToolGUID, ResultsCount: len(run.Results), RulesCount: run.RulesCount, CreatedAt: now}
	if err := insertAnalysis(ctx, tx, an); err != nil {
		return err
	}
	v := view{base: s.BaseURL, users: map[int64]*accounts.Account{}}
	var created []*Alert
	for i := range run.Results {
		r := &run.Results[i]
		a, isNew, err := ensureAlert(ctx, tx, repo.ID, run, r, now)
		if err != nil {
			return err
		}
		if err := insertInstance(ctx, tx, a.ID, an.ID, r); err != nil {
			return err
		}
		if isNew {
			a.Recent = &Instance{AlertID: a.ID, Analysis: *an, Message: r.Message, Path: r.Path, StartLine: r.StartLine,
				EndLine: r.EndLine, StartCol: r.StartColumn, EndCol: r.EndColumn, Open: true}
			created = append(created, a)
		}
	}
	for _, a := range created {
		if err := s.emit(ctx, tx, v, repo, a, "created", u.Ref, u.CommitSHA, uploader); err != nil {
			return err
		}
	}
	fixed, reopened, err := settle(ctx, tx, repo.ID, run.ToolName, now)
	if err != nil {
		return err
	}
	for _, change := range []struct {
		action string
		alerts []*Alert
	}{{"fixed", fixed}, {"reopened", reopened}} {
		if err := recentInstances(ctx, tx, change.alerts); err != nil {
			return err
		}
		for _, a := range change.alerts {
			if err := s.emit(ctx, tx, v, repo, a, change.action, u.Ref, u.CommitSHA, uploader); err != nil {
				return err
			}
		}
	}
	return nil
}
