package settings

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/base32"
	"encoding/hex"
	"errors"
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// TokenLifetime is how long a registration or remove token lasts, as on
// the platform.
const TokenLifetime = time.Hour

// The kinds of runner token.
const (
	TokenRegistration = "registration"
	TokenRemove       = "remove"
)

// Runner is a self-hosted runner registered with a repository or an
// organization.
type Runner struct {
	ID        int64
	Place     Place
	GroupID   int64 // organizations' runners: their runner group
	Name      string
	OS        string
	Version   string
	Status    string // online | offline
	Busy      bool
	Ephemeral bool
	Labels    []Label
	CreatedAt time.Time
}

// Label is a runner's label: the read-only ones the runner reports
// (self-hosted, its OS and architecture) and custom ones.
type Label struct {
	ID     int64
	Name   string
	Custom bool
}

// hashToken is the stored form of a token.
func hashToken(token string) string {
	sum := sha256.Sum256([]byte(token))
	return hex.EncodeToString(sum[:])
}

// newToken is a random token of 29 upper-case letters and digits, the
// platform's registration tokens' form.
func newToken() (string, error) {
	b := make([]byte, 20)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	return base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(b)[:29], nil
}

// CreateToken makes a registration or remove token for the place (a
// repository or an organization), valid for TokenLifetime, and returns it
// with its expiry; only its hash is stored. Expired tokens are pruned.
func (s *Service) CreateToken(ctx context.Context, kind string, p Place) (string, time.Time, error) {
	token, err := newToken()
	if err != nil {
		return "", time.Time{}, err
	}
	at := s.clock()
	expires := at.Add(TokenLifetime)
	repo, org, _ := p.foreignKeys()
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM runner_tokens WHERE expires_at < $1`, at); err != nil {
			return store.Normalize(err)
		}
		_, err := tx.ExecContext(ctx, `INSERT INTO runner_tokens (token_hash, kind, scope, scope_id, repository_id, organization_id,
			expires_at, created_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, hashToken(token), kind, p.Scope, p.ID, repo, org, expires, at)
		return store.Normalize(err)
	})
	return token, expires, err
}

// ErrBadRunnerToken refuses a registration or remove token that does not
// exist, has expired or is of the other kind.
var ErrBadRunnerToken = apierr.Unauthorized("Bad credentials")

// tokenPlace returns the place of an unexpired token of the kind.
func tokenPlace(ctx context.Context, q store.Q, kind, token string, at time.Time) (Place, error) {
	var p Place
	var org *int64
	err := q.QueryRowContext(ctx, `SELECT t.scope, t.scope_id, (SELECT a.id FROM repositories r JOIN accounts a ON a.id = r.owner_id
		WHERE r.id = t.repository_id AND a.type = 'Organization') FROM runner_tokens t WHERE t.token_hash = $1 AND t.kind = $2
		AND t.expires_at > $3`, hashToken(token), kind, at).Scan(&p.Scope, &p.ID, &org)
	if errors.Is(store.Normalize(err), store.ErrNotFound) {
		return p, ErrBadRunnerToken
	}
	if err != nil {
		return p, store.Normalize(err)
	}
	switch p.Scope {
	case ScopeRepo:
		p.RepoID = p.ID
		if org != nil {
			p.OrgID = *org
		}
	case ScopeOrg:
		p.OrgID = p.ID
	}
	return p, nil
}

// NewRunner is what a runner reports when it registers.
type NewRunner struct {
	Name    string
	OS      string // Linux | Windows | macOS
	Arch    string // X64 | ARM64 | ARM
	Version string
	Labels  []string // custom labels
	Group   string   // organizations: the runner group's name; "" for the default group
	// GroupID is an organization's runner's group by id (just-in-time
	// runners), when not 0.
	GroupID   int64
	Ephemeral bool
	Replace   bool // replace a runner of the same name
	// Pending marks a runner made before it runs (just-in-time): offline
	// until it claims a job.
	Pending bool
}

// Register records a runner with the registration token's place and
// returns it with its credential, which the runner keeps to authenticate
// later (only its hash is stored). A name the place has is a 422 unless
// n.Replace; an unknown group is a 422.
func (s *Service) Register(ctx context.Context, token string, n NewRunner) (*Runner, string, error) {
	cred, err := newToken()
	if err != nil {
		return nil, "", err
	}
	cred = "runner_" + cred
	var r *Runner
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, err := tokenPlace(ctx, tx, TokenRegistration, token, s.clock())
		if err != nil {
			return err
		}
		id, err := s.insertRunner(ctx, tx, p, n, cred)
		if err != nil {
			return err
		}
		r, err = runnerByID(ctx, tx, p, id)
		return err
	})
	return r, cred, err
}

// insertRunner stores the runner n of place p with its labels.
func (s *Service) insertRunner(ctx context.Context, tx store.Q, p Place, n NewRunner, cred string) (int64, error) {
	var group *int64
	if p.Scope == ScopeOrg {
		g, err := s.groupForRegistration(ctx, tx, p.ID, n.Group)
		if err != nil {
			return 0, err
		}
		if n.GroupID != 0 {
			if _, err := groupByID(ctx, tx, p.ID, n.GroupID); errors.Is(err, store.ErrNotFound) {
				return 0, errNoGroup
			} else if err != nil {
				return 0, err
			}
			g = n.GroupID
		}
		group = &g
	}
	old, err := runnerByName(ctx, tx, p, n.Name)
	if err == nil && !n.Replace {
		return 0, apierr.Validation(apierr.FieldError{Resource: "Runner", Field: "name", Code: "already_exists",
			Message: "A runner exists with the same name"})
	} else if err == nil {
		if _, err := tx.ExecContext(ctx, `DELETE FROM runners WHERE id = $1`, old); err != nil {
			return 0, store.Normalize(err)
		}
	} else if !errors.Is(err, store.ErrNotFound) {
		return 0, err
	}
	repo, org, ent := policyKeys(p)
	if p.Scope != ScopeEnterprise {
		ent = nil
	}
	status, seen := "online", sql.NullTime{Time: now(), Valid: true}
	if n.Pending {
		status, seen = "offline", sql.NullTime{}
	}
	var id int64
	err = tx.QueryRowContext(ctx, `INSERT INTO runners (scope, scope_id, repository_id, organization_id, runner_group_id, name, os,
		version, status, ephemeral, credential_hash, last_seen_at, created_at, enterprise_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14)
		RETURNING id`, p.Scope, p.ID, repo, org, group, n.Name, n.OS, n.Version, status, n.Ephemeral, hashToken(cred), seen, now(),
		ent).Scan(&id)
	if err != nil {
		return 0, store.Normalize(err)
	}
	for _, l := range []string{"self-hosted", n.OS, n.Arch} {
		if err := addLabel(ctx, tx, id, l, false); err != nil {
			return 0, err
		}
	}
	for _, l := range n.Labels {
		if err := addLabel(ctx, tx, id, l, true); err != nil {
			return 0, err
		}
	}
	return id, nil
}

// errNoGroup refuses a just-in-time runner's group the organization does
// not have.
var errNoGroup = apierr.Validation(apierr.FieldError{Resource: "Runner", Field: "runner_group_id", Code: apierr.CodeInvalid,
	Message: "The organization has no runner group of that id"})

// errRunnerExists is generate-jitconfig's answer for a name the place has.
var errRunnerExists = apierr.New(http.StatusConflict, "A runner exists with the same name")

// CreateJITRunner makes a just-in-time runner of the place: ephemeral,
// registered before it runs (offline until it claims a job), with the
// read-only labels self-hosted and n.OS, n.Arch when given, and n.Labels
// as custom labels. It returns the runner and its credential (for the
// runner's encoded configuration). A name the place has is a 409.
func (s *Service) CreateJITRunner(ctx context.Context, p Place, n NewRunner) (*Runner, string, error) {
	cred, err := newToken()
	if err != nil {
		return nil, "", err
	}
	cred = "runner_" + cred
	n.Ephemeral, n.Pending, n.Replace = true, true, false
	var r *Runner
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := runnerByName(ctx, tx, p, n.Name); err == nil {
			return errRunnerExists
		} else if !errors.Is(err, store.ErrNotFound) {
			return err
		}
		id, err := s.insertRunner(ctx, tx, p, n, cred)
		if err != nil {
			return err
		}
		r, err = runnerByID(ctx, tx, p, id)
		return err
	})
	return r, cred, err
}

// errSessionTaken refuses a claim with an ephemeral runner's credential
// from a process other than the first one that claimed with it.
var errSessionTaken = apierr.New(http.StatusConflict, "This runner's configuration is already in use by another runner process (an ephemeral or just-in-time runner runs once)")

// BindSession ties an ephemeral runner to the process session that
// claims first: the same session again is fine, another one a 409.
func (s *Service) BindSession(ctx context.Context, id int64, session string) error {
	if session == "" {
		return errSessionTaken
	}
	n, err := store.Affected(s.DB.ExecContext(ctx, `UPDATE runners SET session = $1 WHERE id = $2 AND (session = '' OR session = $1)`,
		session, id))
	if err != nil {
		return err
	}
	if n == 0 {
		return errSessionTaken
	}
	return nil
}

// RemoveEphemeral removes the runner when it is ephemeral: its one job
// ended. Another runner is no change.
func (s *Service) RemoveEphemeral(ctx context.Context, id int64) error {
	_, err := s.DB.ExecContext(ctx, `DELETE FROM runners WHERE id = $1 AND ephemeral`, id)
	return store.Normalize(err)
}

// Unregister removes the runner named name from the remove token's place
// (store.ErrNotFound when it has none).
func (s *Service) Unregister(ctx context.Context, token, name string) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, err := tokenPlace(ctx, tx, TokenRemove, token, s.clock())
		if err != nil {
			return err
		}
		id, err := runnerByName(ctx, tx, p, name)
		if err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM runners WHERE id = $1`, id)
		return store.Normalize(err)
	})
}

// RunnerByCredential returns the runner whose credential this is
// (store.ErrNotFound when none); RunnerForJobs is how the run machinery
// authenticates a runner that asks for jobs.
func (s *Service) RunnerByCredential(ctx context.Context, credential string) (*Runner, error) {
	var p Place
	var id int64
	err := s.DB.QueryRowContext(ctx, `SELECT id, scope, scope_id FROM runners WHERE credential_hash = $1`, hashToken(credential)).
		Scan(&id, &p.Scope, &p.ID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	return runnerByID(ctx, s.DB, p, id)
}

// SetRunnerStatus records what a runner reports: online or offline, busy
// or idle, and that it was seen now (a runner not seen for OfflineAfter
// is shown offline).
func (s *Service) SetRunnerStatus(ctx context.Context, id int64, online, busy bool) error {
	status := "offline"
	if online {
		status = "online"
	}
	_, err := s.DB.ExecContext(ctx, `UPDATE runners SET status = $1, busy = $2, last_seen_at = $3 WHERE id = $4`, status, busy, now(), id)
	return store.Normalize(err)
}

// runnerByName is the id of the place's runner named name.
func runnerByName(ctx context.Context, q store.Q, p Place, name string) (int64, error) {
	var id int64
	err := q.QueryRowContext(ctx, `SELECT id FROM runners WHERE scope = $1 AND scope_id = $2 AND lower(name) = lower($3)`,
		p.Scope, p.ID, name).Scan(&id)
	return id, store.Normalize(err)
}

// runnerColumns are the columns scanRunners reads.
const runnerColumns = `id, COALESCE(runner_group_id, 0), name, os, version, status, busy, ephemeral, created_at, last_seen_at`

// Runners returns a page of the place's runners by id, those named name
// only when name is not "", and how many there are.
func (s *Service) Runners(ctx context.Context, p Place, name string, limit, offset int) ([]*Runner, int, error) {
	where := `scope = $1 AND scope_id = $2 AND ($3 = '' OR lower(name) = lower($3))`
	var total int
	if err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM runners WHERE `+where, p.Scope, p.ID, name).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	list, err := scanRunners(ctx, s.DB, p, `SELECT `+runnerColumns+` FROM runners WHERE `+where+` ORDER BY id LIMIT $4 OFFSET $5`,
		p.Scope, p.ID, name, limit, offset)
	return list, total, err
}

// Runner returns the place's runner id (store.ErrNotFound when none).
func (s *Service) Runner(ctx context.Context, p Place, id int64) (*Runner, error) {
	return runnerByID(ctx, s.DB, p, id)
}

// runnerByID is Runner on q.
func runnerByID(ctx context.Context, q store.Q, p Place, id int64) (*Runner, error) {
	list, err := scanRunners(ctx, q, p, `SELECT `+runnerColumns+` FROM runners WHERE scope = $1 AND scope_id = $2 AND id = $3`,
		p.Scope, p.ID, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// DeleteRunner removes the place's runner id (store.ErrNotFound when
// none).
func (s *Service) DeleteRunner(ctx context.Context, p Place, id int64) error {
	res, err := s.DB.ExecContext(ctx, `DELETE FROM runners WHERE scope = $1 AND scope_id = $2 AND id = $3`, p.Scope, p.ID, id)
	if err != nil {
		return store.Normalize(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// scanRunners runs a query of runnerColumns and loads each runner's
// labels.
func scanRunners(ctx context.Context, q store.Q, p Place, query string, args ...any) ([]*Runner, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []*Runner{}
	for rows.Next() {
		r := &Runner{Place: p}
		var lastSeen sql.NullTime
		if err := rows.Scan(&r.ID, &r.GroupID, &r.Name, &r.OS, &r.Version, &r.Status, &r.Busy, &r.Ephemeral, &r.CreatedAt, &lastSeen); err != nil {
			return nil, store.Normalize(err)
		}
		if lastSeen.Valid {
			shownStatus(r, &lastSeen.Time)
		} else {
			shownStatus(r, nil)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	rows.Close()
	for _, r := range out {
		if r.Labels, err = labelsOf(ctx, q, r.ID); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// labelsOf returns the runner's labels, read-only ones first.
func labelsOf(ctx context.Context, q store.Q, runnerID int64) ([]Label, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, name, custom FROM runner_labels WHERE runner_id = $1 ORDER BY custom, id`, runnerID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []Label{}
	for rows.Next() {
		var l Label
		if err := rows.Scan(&l.ID, &l.Name, &l.Custom); err != nil {
			return nil, err
		}
		out = append(out, l)
	}
	return out, store.Normalize(rows.Err())
}

// addLabel gives the runner a label; one it has (in any case) is no
// change.
func addLabel(ctx context.Context, q store.Q, runnerID int64, name string, custom bool) error {
	if name == "" {
		return nil
	}
	_, err := q.ExecContext(ctx, `INSERT INTO runner_labels (runner_id, name, custom) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
		runnerID, name, custom)
	return store.Normalize(err)
}

// AddLabels adds custom labels to the runner and returns its labels.
func (s *Service) AddLabels(ctx context.Context, r *Runner, names []string) ([]Label, error) {
	var out []Label
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		for _, n := range names {
			if err := addLabel(ctx, tx, r.ID, n, true); err != nil {
				return err
			}
		}
		var err error
		out, err = labelsOf(ctx, tx, r.ID)
		return err
	})
	return out, err
}

// SetLabels replaces the runner's custom labels and returns its labels.
func (s *Service) SetLabels(ctx context.Context, r *Runner, names []string) ([]Label, error) {
	var out []Label
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM runner_labels WHERE runner_id = $1 AND custom`, r.ID); err != nil {
			return store.Normalize(err)
		}
		for _, n := range names {
			if err := addLabel(ctx, tx, r.ID, n, true); err != nil {
				return err
			}
		}
		var err error
		out, err = labelsOf(ctx, tx, r.ID)
		return err
	})
	return out, err
}

// errReadOnlyLabel refuses removing a label the runner reports itself.
var errReadOnlyLabel = apierr.New(http.StatusUnprocessableEntity, "Cannot remove a read-only label from a runner")

// RemoveLabel removes a custom label from the runner and returns its
// labels: store.ErrNotFound when it has no such label, a 422 for a
// read-only one.
func (s *Service) RemoveLabel(ctx context.Context, r *Runner, name string) ([]Label, error) {
	var out []Label
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		var custom bool
		err := tx.QueryRowContext(ctx, `SELECT custom FROM runner_labels WHERE runner_id = $1 AND lower(name) = lower($2)`,
			r.ID, name).Scan(&custom)
		if err != nil {
			return store.Normalize(err)
		}
		if !custom {
			return errReadOnlyLabel
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM runner_labels WHERE runner_id = $1 AND lower(name) = lower($2)`, r.ID, name); err != nil {
			return store.Normalize(err)
		}
		out, err = labelsOf(ctx, tx, r.ID)
		return err
	})
	return out, err
}

// validLabel reports whether a custom label is one the platform takes: 1
// to 100 characters, no commas or spaces at its ends.
func validLabel(l string) bool {
	return l != "" && len(l) <= 100 && !strings.Contains(l, ",") && strings.TrimSpace(l) == l
}
