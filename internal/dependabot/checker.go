package dependabot

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/depreview"
	"forgeapi/internal/depreview/advisorydb"
	"forgeapi/internal/events"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/gitread"
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

// Config configures the Checker. Zero fields take the defaults.
type Config struct {
	// Lease is how long a claimed repository stays with this server.
	// Default DefaultLease.
	Lease time.Duration
	// PollInterval is how often Run looks for work no wake announced.
	// Default DefaultPollInterval.
	PollInterval time.Duration
}

// Checker brings a repository's alerts to its default branch: the push
// sink that asks for a check and the leased worker that does it.
type Checker struct {
	svc    *Service
	cfg    Config
	owner  string
	logger *slog.Logger
	signal *worker.Signal
}

// NewChecker returns the Checker of svc's repositories.
func NewChecker(svc *Service, cfg Config, logger *slog.Logger) *Checker {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	c := &Checker{svc: svc, cfg: cfg, owner: wire.NewGUID(), logger: logger, signal: worker.NewSignal()}
	svc.extractor = depreview.NewExtractor()
	svc.wake = c.signal.Wake
	return c
}

// HandleEvent asks for a check of a repository with alerts on when its
// default branch is pushed or changed; it ignores the other events.
func (c *Checker) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.Repo == nil {
		return nil
	}
	switch e.HookEvent {
	case "push":
		if ref, _ := e.HookPayload["ref"].(string); ref != "refs/heads/"+e.Repo.DefaultBranch {
			return nil
		}
	case "repository":
		changes, _ := e.HookPayload["changes"].(map[string]any)
		if e.HookPayload["action"] != "edited" || changes["default_branch"] == nil {
			return nil
		}
	default:
		return nil
	}
	var actor *int64
	if e.Actor != nil {
		actor = &e.Actor.ID
	}
	if err := request(ctx, tx, e.Repo.ID, actor, false); err != nil {
		return fmt.Errorf("request dependabot check: %w", err)
	}
	tx.AfterCommit(c.signal.Wake)
	return nil
}

// Run checks due repositories at start, when woken, and every
// PollInterval, until ctx is done.
func (c *Checker) Run(ctx context.Context) {
	worker.Loop{Pass: func(ctx context.Context) { c.RunOnce(ctx) }, Interval: c.cfg.PollInterval, Wake: c.signal.C()}.Run(ctx)
}

// RunOnce asks for a check of every repository with alerts on when the
// advisory database changed since its last one, then checks every due
// repository it can claim and returns how many.
func (c *Checker) RunOnce(ctx context.Context) int {
	if err := c.svc.advisoriesChanged(ctx); err != nil {
		c.logger.Error("dependabot: follow the advisory database", "err", err)
	}
	n, err := worker.Drain[claim](ctx, queue{c}, func(cl claim, err error) {
		c.logger.Error("dependabot check", "repository_id", cl.repoID, "err", err)
	})
	if err != nil {
		c.logger.Error("claim a repository for a dependabot check", "err", err)
	}
	return n
}

// ReleaseLeases ends now the leases a killed process held. Only the one
// server of a database may call it.
func (c *Checker) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(c.svc.DB.ExecContext(ctx, `UPDATE dependabot_repositories SET lease_owner = '', lease_until = NULL
		WHERE repository_id IN (SELECT repository_id FROM dependabot_repositories WHERE lease_until > $1)`, store.Now()))
}

// advisoriesChanged asks for a check of the repositories with alerts on
// that are not due and were checked against an older version of the
// advisory database than the current one
// (an import by `forgeapi advisories import`, here or in another
// process).
func (s *Service) advisoriesChanged(ctx context.Context) error {
	version, err := advisorydb.Version(ctx, s.DB)
	if err != nil {
		return err
	}
	_, err = s.DB.ExecContext(ctx, `UPDATE dependabot_repositories SET requested = requested + 1, advisory_version = $1
		WHERE enabled = $2 AND advisory_version < $1 AND requested = checked`, version, true)
	return store.Normalize(err)
}

type claim struct {
	repoID, requested int64
	actorID           *int64
}

type queue struct{ c *Checker }

// Claim leases the due repository with the lowest id.
func (q queue) Claim(ctx context.Context) (claim, bool, error) {
	db := q.c.svc.DB
	now := store.Now()
	var cl claim
	err := db.QueryRowContext(ctx, `UPDATE dependabot_repositories SET lease_owner = $1, lease_until = $2
		WHERE repository_id IN (SELECT repository_id FROM dependabot_repositories
			WHERE enabled = $3 AND requested > checked AND (lease_until IS NULL OR lease_until < $4)
			ORDER BY repository_id LIMIT 1`+db.SkipLocked()+`)
		RETURNING repository_id, requested, actor_id`, q.c.owner, now.Add(q.c.cfg.Lease), true, now).Scan(&cl.repoID, &cl.requested, &cl.actorID)
	if errors.Is(err, sql.ErrNoRows) {
		return cl, false, nil
	}
	if err != nil {
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return cl, false, nil
		}
		return cl, false, err
	}
	return cl, true, nil
}

// Run checks the claimed repository.
func (q queue) Run(ctx context.Context, cl claim) error { return q.c.check(ctx, cl) }

var errLeaseLost = errors.New("dependabot: lease lost")

// check reads the default branch's manifests, matches them and, in one
// transaction with the generation checked, brings the alerts to them.
func (c *Checker) check(ctx context.Context, cl claim) error {
	db := c.svc.DB
	repo, err := repos.ByID(ctx, db, cl.repoID)
	if errors.Is(err, store.ErrNotFound) {
		return nil
	}
	if err != nil {
		return err
	}
	found, version, err := c.svc.scan(ctx, repo)
	if err != nil {
		return err
	}
	var actor *accounts.Account
	if cl.actorID != nil {
		if actor, err = accounts.ByID(ctx, db, *cl.actorID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return db.Tx(ctx, func(tx *store.Tx) error {
		n, err := store.Affected(tx.ExecContext(ctx, `UPDATE dependabot_repositories SET checked = $1, advisory_version = $2,
			lease_owner = '', lease_until = NULL WHERE repository_id = $3 AND lease_owner = $4`, cl.requested, version, repo.ID, c.owner))
		if err != nil {
			return store.Normalize(err)
		}
		if n == 0 {
			return errLeaseLost
		}
		return c.svc.sync(ctx, tx, repo, found, actor)
	})
}

// scan returns the vulnerable dependencies of the repository's default
// branch as alerts to be (state open), and the version of the advisory
// database it matched them against.
func (s *Service) scan(ctx context.Context, repo *repos.Repository) ([]*Alert, int64, error) {
	snap, err := s.Advisories.Current(ctx)
	if err != nil {
		return nil, 0, err
	}
	dir := s.Repos.GitDir(repo.ID)
	out, err := gitcmd.In(dir).Output(ctx, nil, "ls-tree", "-r", "-z", "--full-tree", "refs/heads/"+repo.DefaultBranch)
	if err != nil {
		if gitcmd.Exited(err) {
			return nil, snap.Version, nil // no default branch yet: no dependencies
		}
		return nil, 0, fmt.Errorf("list the default branch: %w", err)
	}
	g, err := gitread.Open(dir)
	if err != nil {
		return nil, 0, err
	}
	defer g.Close()
	docs := map[string]*osvDoc{}
	seen := map[string]bool{}
	var alerts []*Alert
	for _, entry := range bytes.Split(out, []byte{0}) {
		meta, path, ok := strings.Cut(string(entry), "\t")
		f := strings.Fields(meta)
		if !ok || len(f) != 3 || f[1] != "blob" || !s.extractor.IsManifest(path) {
			continue
		}
		content, err := g.ReadBlob(f[2])
		if err != nil {
			return nil, 0, fmt.Errorf("read %s: %w", path, err)
		}
		deps, err := s.extractor.Extract(ctx, path, content)
		if err != nil {
			continue // a malformed manifest has no dependencies to alert on
		}
		for _, d := range deps {
			for _, v := range snap.Index.Match(string(d.Ecosystem), d.Name, d.Version) {
				key := v.AdvisoryGHSAID + "\x00" + string(d.Ecosystem) + "\x00" + d.Name + "\x00" + path
				if seen[key] {
					continue
				}
				seen[key] = true
				doc, err := s.document(ctx, docs, v.AdvisoryGHSAID)
				if err != nil {
					return nil, 0, err
				}
				adv, vuln := render(doc, v, string(d.Ecosystem), d.Name)
				a := &Alert{RepoID: repo.ID, GHSAID: v.AdvisoryGHSAID, Ecosystem: alertEcosystem(string(d.Ecosystem)), Package: d.Name,
					ManifestPath: path, Severity: adv.Severity, State: StateOpen}
				if d.Scope == depreview.ScopeRuntime || d.Scope == depreview.ScopeDevelopment {
					scope := string(d.Scope)
					a.Scope = &scope
				}
				if a.Advisory, a.Vulnerability, err = encode(adv, vuln); err != nil {
					return nil, 0, err
				}
				alerts = append(alerts, a)
			}
		}
	}
	return alerts, snap.Version, nil
}

func encode(adv advisoryJSON, vuln vulnerabilityJSON) (string, string, error) {
	a, err := json.Marshal(adv)
	if err != nil {
		return "", "", err
	}
	v, err := json.Marshal(vuln)
	return string(a), string(v), err
}

// document reads the advisory's OSV document (nil when it is not stored
// under that id), once per check.
func (s *Service) document(ctx context.Context, cache map[string]*osvDoc, id string) (*osvDoc, error) {
	if d, ok := cache[id]; ok {
		return d, nil
	}
	var raw []byte
	err := s.DB.QueryRowContext(ctx, `SELECT document FROM advisories WHERE id = $1`, id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		cache[id] = nil
		return nil, nil
	}
	if err != nil {
		return nil, store.Normalize(err)
	}
	d, err := parseOSV(raw)
	if err != nil {
		d = nil // a document the index read but this reader cannot: the match's facts only
	}
	cache[id] = d
	return d, nil
}

// sync brings the repository's alerts to what a check found: a new
// vulnerable dependency is an alert (created); an open alert whose
// dependency is gone is fixed; a fixed one whose dependency came back is
// open again (reintroduced). Dismissed alerts stay dismissed. The
// advisory shown is refreshed.
func (s *Service) sync(ctx context.Context, tx *store.Tx, repo *repos.Repository, found []*Alert, actor *accounts.Account) error {
	existing, err := repoAlerts(ctx, tx, repo.ID)
	if err != nil {
		return err
	}
	key := func(a *Alert) string {
		return a.GHSAID + "\x00" + a.Ecosystem + "\x00" + a.Package + "\x00" + a.ManifestPath
	}
	byKey := map[string]*Alert{}
	for _, a := range existing {
		byKey[key(a)] = a
	}
	now := tx.Now()
	v := view{base: s.BaseURL, users: map[int64]*accounts.Account{}}
	still := map[string]bool{}
	for _, f := range found {
		k := key(f)
		still[k] = true
		a := byKey[k]
		if a == nil {
			f.CreatedAt, f.UpdatedAt = now, now
			if err := insertAlert(ctx, tx, f); err != nil {
				return err
			}
			if err := s.emit(ctx, tx, v, repo, f, "created", actor); err != nil {
				return err
			}
			continue
		}
		a.Advisory, a.Vulnerability, a.Severity, a.Scope = f.Advisory, f.Vulnerability, f.Severity, f.Scope
		action := ""
		if a.State == StateFixed {
			a.State, a.FixedAt, a.UpdatedAt, action = StateOpen, nil, now, "reintroduced"
		}
		if err := writeState(ctx, tx, a); err != nil {
			return err
		}
		if action != "" {
			if err := s.emit(ctx, tx, v, repo, a, action, actor); err != nil {
				return err
			}
		}
	}
	for _, a := range existing {
		if still[key(a)] || a.State != StateOpen {
			continue
		}
		a.State, a.FixedAt, a.UpdatedAt = StateFixed, &now, now
		if err := writeState(ctx, tx, a); err != nil {
			return err
		}
		if err := s.emit(ctx, tx, v, repo, a, "fixed", actor); err != nil {
			return err
		}
	}
	return nil
}

// emit sends dependabot_alert with the action.
func (s *Service) emit(ctx context.Context, tx *store.Tx, v view, repo *repos.Repository, a *Alert, action string, sender *accounts.Account) error {
	j, err := v.alert(repo, a, false)
	if err != nil {
		return err
	}
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "dependabot_alert", Repo: repo, Actor: sender,
		HookPayload: map[string]any{"action": action, "alert": j}})
}
