package secretscanning

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/accounts"
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

// Config configures the Scanner. Zero fields take the defaults.
type Config struct {
	// Lease is how long a claimed push stays with this server; a scan
	// killed or failed is done again once it expired. Default
	// DefaultLease.
	Lease time.Duration
	// PollInterval is how often Run looks for due work no wake announced
	// (other servers' pushes, expired leases). Default DefaultPollInterval.
	PollInterval time.Duration
}

// Scanner scans pushes for secrets: it is the push sink that records a
// push of a repository with secret scanning on (in the push's
// transaction), and the leased worker that scans it.
type Scanner struct {
	svc    *Service
	cfg    Config
	owner  string
	logger *slog.Logger
	wake   *worker.Signal
}

// NewScanner returns the Scanner of svc's repositories.
func NewScanner(svc *Service, cfg Config, logger *slog.Logger) *Scanner {
	if cfg.Lease <= 0 {
		cfg.Lease = DefaultLease
	}
	if cfg.PollInterval <= 0 {
		cfg.PollInterval = DefaultPollInterval
	}
	if logger == nil {
		logger = slog.Default()
	}
	return &Scanner{svc: svc, cfg: cfg, owner: wire.NewGUID(), logger: logger, wake: worker.NewSignal()}
}

// zeroSHA is the object name git gives a reference that does not exist.
const zeroSHA = "0000000000000000000000000000000000000000"

// HandleEvent records a push (git's or the server's own) that moves a
// reference to a commit in a repository with secret scanning on; it
// ignores the other events and deletions.
func (s *Scanner) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.HookEvent != "push" || e.Repo == nil || !Enabled(e.Repo) {
		return nil
	}
	before, _ := e.HookPayload["before"].(string)
	after, _ := e.HookPayload["after"].(string)
	if strings.Trim(after, "0") == "" {
		return nil
	}
	var pusher *int64
	if e.Actor != nil {
		pusher = &e.Actor.ID
	}
	_, err := tx.ExecContext(ctx, `INSERT INTO secret_scanning_work (repository_id, before_sha, after_sha, pusher_id, created_at)
		VALUES ($1, $2, $3, $4, $5)`, e.Repo.ID, before, after, pusher, store.Now())
	if err != nil {
		return fmt.Errorf("request secret scanning: %w", store.Normalize(err))
	}
	tx.AfterCommit(s.wake.Wake)
	return nil
}

// Run scans due pushes at start, when woken by a push on this server,
// and every PollInterval, until ctx is done.
func (s *Scanner) Run(ctx context.Context) {
	worker.Loop{Pass: func(ctx context.Context) { s.RunOnce(ctx) }, Interval: s.cfg.PollInterval, Wake: s.wake.C()}.Run(ctx)
}

// RunOnce scans every due push it can claim and returns how many it
// scanned. A push that failed stays leased and is scanned again once its
// lease expired.
func (s *Scanner) RunOnce(ctx context.Context) int {
	n, err := worker.Drain[work](ctx, queue{s}, func(w work, err error) {
		s.logger.Error("secret scanning", "repository_id", w.repoID, "after", w.after, "err", err)
	})
	if err != nil {
		s.logger.Error("claim a push for secret scanning", "err", err)
	}
	return n
}

// ReleaseLeases ends now the leases a killed process held and reports
// how many it ended. Only the one server of a database may call it.
func (s *Scanner) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(s.svc.DB.ExecContext(ctx, `UPDATE secret_scanning_work SET lease_owner = '', lease_until = NULL
		WHERE id IN (SELECT id FROM secret_scanning_work WHERE lease_until > $1)`, store.Now()))
}

// work is a claimed push.
type work struct {
	id, repoID    int64
	before, after string
	pusherID      *int64
}

// queue is secret_scanning_work as the Scanner's worker.Queue.
type queue struct{ s *Scanner }

// Claim leases the oldest due push.
func (q queue) Claim(ctx context.Context) (work, bool, error) {
	s := q.s
	var w work
	now := store.Now()
	err := s.svc.DB.QueryRowContext(ctx, `UPDATE secret_scanning_work SET lease_owner = $1, lease_until = $2
		WHERE id IN (
			SELECT id FROM secret_scanning_work WHERE lease_until IS NULL OR lease_until < $3
			ORDER BY id LIMIT 1`+s.svc.DB.SkipLocked()+`)
		RETURNING id, repository_id, before_sha, after_sha, pusher_id`, s.owner, now.Add(s.cfg.Lease), now).
		Scan(&w.id, &w.repoID, &w.before, &w.after, &w.pusherID)
	if errors.Is(err, sql.ErrNoRows) {
		return w, false, nil
	}
	if err != nil {
		if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
			return w, false, nil
		}
		return w, false, err
	}
	return w, true, nil
}

// errLeaseLost ends a scan whose lease another server took over.
var errLeaseLost = errors.New("secretscanning: lease lost")

// finding is one secret found in one blob of one commit.
type finding struct {
	Match
	path, blob, commit string
}

// Run scans the claimed push (Scanner.scan).
func (q queue) Run(ctx context.Context, w work) error { return q.s.scan(ctx, w) }

// scan scans a claimed push: the commits it adds that were not scanned
// before, the blobs each adds or changes. Alerts, locations and their
// webhooks are written in one transaction with the push's row deleted.
func (s *Scanner) scan(ctx context.Context, w work) error {
	started := store.Now()
	repo, err := repos.ByID(ctx, s.svc.DB, w.repoID)
	if errors.Is(err, store.ErrNotFound) {
		return nil // its work row went with it
	}
	if err != nil {
		return fmt.Errorf("load repository: %w", err)
	}
	var commits []string
	var found []finding
	if Enabled(repo) {
		dir := s.svc.Repos.GitDir(repo.ID)
		if commits, err = s.newCommits(ctx, dir, w); err != nil {
			return err
		}
		if found, err = scanCommits(ctx, dir, commits); err != nil {
			return err
		}
	}
	var pusher *accounts.Account
	if w.pusherID != nil {
		if pusher, err = accounts.ByID(ctx, s.svc.DB, *w.pusherID); err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
	}
	return s.svc.DB.Tx(ctx, func(tx *store.Tx) error {
		n, err := store.Affected(tx.ExecContext(ctx, `DELETE FROM secret_scanning_work WHERE id = $1 AND lease_owner = $2`, w.id, s.owner))
		if err != nil {
			return fmt.Errorf("finish secret scanning: %w", store.Normalize(err))
		}
		if n == 0 {
			return errLeaseLost
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO secret_scanning_scans (repository_id, started_at, completed_at) VALUES ($1, $2, $3)
			ON CONFLICT (repository_id) DO UPDATE SET started_at = $2, completed_at = $3`, repo.ID, started, tx.Now()); err != nil {
			return fmt.Errorf("record secret scan: %w", store.Normalize(err))
		}
		for _, c := range commits {
			if _, err := tx.ExecContext(ctx, `INSERT INTO secret_scanning_commits (repository_id, sha) VALUES ($1, $2)
				ON CONFLICT (repository_id, sha) DO NOTHING`, repo.ID, c); err != nil {
				return fmt.Errorf("record scanned commit: %w", store.Normalize(err))
			}
		}
		return s.svc.record(ctx, tx, repo, pusher, found)
	})
}

// newCommits are the commits the push adds (from before to after, all of
// after's history for a new reference), oldest first, less those scanned
// already.
func (s *Scanner) newCommits(ctx context.Context, dir string, w work) ([]string, error) {
	args := []string{"rev-list", "--reverse", w.after}
	if strings.Trim(w.before, "0") != "" {
		args = append(args, "^"+w.before)
	}
	out, err := gitcmd.In(dir).Text(ctx, nil, args...)
	if err != nil {
		return nil, fmt.Errorf("list pushed commits: %w", err)
	}
	all := strings.Fields(out)
	scanned, err := s.scanned(ctx, w.repoID, all)
	if err != nil {
		return nil, err
	}
	var fresh []string
	for _, c := range all {
		if !scanned[c] {
			fresh = append(fresh, c)
		}
	}
	return fresh, nil
}

// scanned returns which of the commits were scanned before.
func (s *Scanner) scanned(ctx context.Context, repoID int64, commits []string) (map[string]bool, error) {
	done := map[string]bool{}
	for start := 0; start < len(commits); start += 500 {
		chunk := commits[start:min(start+500, len(commits))]
		args := []any{repoID}
		ph := make([]string, len(chunk))
		for i, c := range chunk {
			args = append(args, c)
			ph[i] = "$" + strconv.Itoa(len(args))
		}
		rows, err := s.svc.DB.QueryContext(ctx, `SELECT sha FROM secret_scanning_commits WHERE repository_id = $1 AND sha IN (`+
			strings.Join(ph, ", ")+`)`, args...)
		if err != nil {
			return nil, store.Normalize(err)
		}
		for rows.Next() {
			var sha string
			if err := rows.Scan(&sha); err != nil {
				rows.Close()
				return nil, store.Normalize(err)
			}
			done[sha] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, store.Normalize(err)
		}
	}
	return done, nil
}

// scanCommits reads the blobs each commit adds or changes against its
// first parent (each blob once, in the first commit that has it) and
// returns the secrets in them.
func scanCommits(ctx context.Context, dir string, commits []string) ([]finding, error) {
	if len(commits) == 0 {
		return nil, nil
	}
	g, err := gitread.Open(dir)
	if err != nil {
		return nil, err
	}
	defer g.Close()
	seen := map[string]bool{}
	var out []finding
	for _, c := range commits {
		changed, err := changedBlobs(ctx, dir, c)
		if err != nil {
			return nil, err
		}
		for _, b := range changed {
			if seen[b.blob] {
				continue
			}
			seen[b.blob] = true
			content, err := g.ReadBlob(b.blob)
			if err != nil {
				return nil, fmt.Errorf("read %s: %w", b.path, err)
			}
			for _, m := range Scan(content) {
				out = append(out, finding{Match: m, path: b.path, blob: b.blob, commit: c})
			}
		}
	}
	return out, nil
}

type changedBlob struct{ path, blob string }

// changedBlobs lists the regular files (not submodules or symlinks) the
// commit adds or changes against its first parent (all of a root
// commit's).
func changedBlobs(ctx context.Context, dir, commit string) ([]changedBlob, error) {
	out, err := gitcmd.In(dir).Output(ctx, nil, "diff-tree", "-r", "-z", "--root", "--no-commit-id", "--no-renames",
		"--diff-filter=AMT", commit)
	if err != nil {
		return nil, fmt.Errorf("diff-tree %s: %w", commit, err)
	}
	var list []changedBlob
	fields := bytes.Split(out, []byte{0})
	for i := 0; i+1 < len(fields); i += 2 {
		meta := strings.Fields(string(fields[i])) // ":old-mode new-mode old-sha new-sha status"
		if len(meta) != 5 || !strings.HasPrefix(meta[1], "100") {
			continue
		}
		list = append(list, changedBlob{path: string(fields[i+1]), blob: meta[3]})
	}
	return list, nil
}
