package dependabot

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/store"
)

// args builds a statement's numbered placeholders.
type args []any

func (a *args) add(v any) string { *a = append(*a, v); return "$" + strconv.Itoa(len(*a)) }

const alertColumns = `a.id, a.repository_id, a.number, a.ghsa_id, a.ecosystem, a.package_name, a.manifest_path, a.scope, a.severity,
	a.advisory, a.vulnerability, a.state, a.dismissed_by_id, a.dismissed_at, a.dismissed_reason, a.dismissed_comment, a.fixed_at,
	a.created_at, a.updated_at`

func utc(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

func scanAlert(row store.Scanner) (*Alert, error) {
	var a Alert
	var dismissedAt, fixedAt sql.NullTime
	err := row.Scan(&a.ID, &a.RepoID, &a.Number, &a.GHSAID, &a.Ecosystem, &a.Package, &a.ManifestPath, &a.Scope, &a.Severity,
		&a.Advisory, &a.Vulnerability, &a.State, &a.DismissedByID, &dismissedAt, &a.DismissedReason, &a.DismissedComment, &fixedAt,
		&a.CreatedAt, &a.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	a.DismissedAt, a.FixedAt = utc(dismissedAt), utc(fixedAt)
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return &a, nil
}

func alertByNumber(ctx context.Context, q store.Q, repoID, number int64) (*Alert, error) {
	return scanAlert(q.QueryRowContext(ctx, `SELECT `+alertColumns+` FROM dependabot_alerts a WHERE a.repository_id = $1 AND a.number = $2`,
		repoID, number))
}

// repoAlerts returns every alert of the repository.
func repoAlerts(ctx context.Context, q store.Q, repoID int64) ([]*Alert, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+alertColumns+` FROM dependabot_alerts a WHERE a.repository_id = $1 ORDER BY a.number`, repoID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []*Alert
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, store.Normalize(rows.Err())
}

func insertAlert(ctx context.Context, tx *store.Tx, a *Alert) error {
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(number), 0) + 1 FROM dependabot_alerts WHERE repository_id = $1`,
		a.RepoID).Scan(&a.Number); err != nil {
		return store.Normalize(err)
	}
	return store.Normalize(tx.QueryRowContext(ctx, `INSERT INTO dependabot_alerts (repository_id, number, ghsa_id, ecosystem, package_name,
		manifest_path, scope, severity, advisory, vulnerability, state, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12) RETURNING id`, a.RepoID, a.Number, a.GHSAID, a.Ecosystem, a.Package,
		a.ManifestPath, a.Scope, a.Severity, a.Advisory, a.Vulnerability, a.State, a.CreatedAt).Scan(&a.ID))
}

// writeState writes the alert's state, dismissal, fix and advisory.
func writeState(ctx context.Context, tx *store.Tx, a *Alert) error {
	_, err := tx.ExecContext(ctx, `UPDATE dependabot_alerts SET state = $1, dismissed_by_id = $2, dismissed_at = $3, dismissed_reason = $4,
		dismissed_comment = $5, fixed_at = $6, updated_at = $7, advisory = $8, vulnerability = $9, severity = $10, scope = $11 WHERE id = $12`,
		a.State, a.DismissedByID, a.DismissedAt, a.DismissedReason, a.DismissedComment, a.FixedAt, a.UpdatedAt, a.Advisory,
		a.Vulnerability, a.Severity, a.Scope, a.ID)
	return store.Normalize(err)
}

// Scope is what a list covers: one of a repository, an organization's
// repositories, an enterprise's organizations' repositories.
type Scope struct {
	RepoID       int64
	OrgID        int64
	EnterpriseID int64
}

// Filter is a list's query: comma lists of states, severities,
// ecosystems, packages and manifests, the scope, sort and direction.
type Filter struct {
	States     []string
	Severities []string
	Ecosystems []string
	Packages   []string
	Manifests  []string
	Scope      string
	Sort       string // created (default), updated
	Ascending  bool
}

func inList(col string, values []string, a *args) string {
	ph := make([]string, len(values))
	for i, v := range values {
		ph[i] = a.add(v)
	}
	return col + " IN (" + strings.Join(ph, ", ") + ")"
}

// listAlerts returns a page of the scope's alerts (of repositories with
// alerts on) and whether more follow.
func listAlerts(ctx context.Context, q store.Q, s Scope, f Filter, limit, offset int) ([]*Alert, bool, error) {
	var a args
	var where []string
	switch {
	case s.RepoID != 0:
		where = append(where, "a.repository_id = "+a.add(s.RepoID))
	case s.OrgID != 0:
		where = append(where, "r.owner_id = "+a.add(s.OrgID))
	default:
		where = append(where, "r.owner_id IN (SELECT org_id FROM enterprise_orgs WHERE enterprise_id = "+a.add(s.EnterpriseID)+")")
	}
	where = append(where, "d.enabled = "+a.add(true))
	for col, values := range map[string][]string{"a.state": f.States, "a.severity": f.Severities, "a.ecosystem": f.Ecosystems,
		"a.package_name": f.Packages, "a.manifest_path": f.Manifests} {
		if len(values) > 0 {
			where = append(where, inList(col, values, &a))
		}
	}
	if f.Scope != "" {
		where = append(where, "a.scope = "+a.add(f.Scope))
	}
	order := "a.created_at"
	if f.Sort == "updated" {
		order = "a.updated_at"
	}
	dir := " DESC"
	if f.Ascending {
		dir = " ASC"
	}
	rows, err := q.QueryContext(ctx, `SELECT `+alertColumns+` FROM dependabot_alerts a JOIN repositories r ON r.id = a.repository_id
		JOIN dependabot_repositories d ON d.repository_id = a.repository_id
		WHERE `+strings.Join(where, " AND ")+` ORDER BY `+order+dir+`, a.id`+dir+` LIMIT `+a.add(limit+1)+` OFFSET `+a.add(offset), a...)
	return store.ScanPage(rows, err, limit, scanAlert)
}

// enabled reports whether the repository has alerts on.
func enabled(ctx context.Context, q store.Q, repoID int64) (bool, error) {
	var on bool
	err := q.QueryRowContext(ctx, `SELECT enabled FROM dependabot_repositories WHERE repository_id = $1`, repoID).Scan(&on)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	return on, store.Normalize(err)
}

// request asks for the repository's check in q's transaction (when it
// has alerts on, or enabling them), naming who caused it.
func request(ctx context.Context, q store.Q, repoID int64, actorID *int64, enable bool) error {
	if enable {
		_, err := q.ExecContext(ctx, `INSERT INTO dependabot_repositories (repository_id, enabled, actor_id) VALUES ($1, $2, $3)
			ON CONFLICT (repository_id) DO UPDATE SET enabled = $2, actor_id = $3,
				requested = dependabot_repositories.requested + 1`, repoID, true, actorID)
		return store.Normalize(err)
	}
	_, err := q.ExecContext(ctx, `UPDATE dependabot_repositories SET requested = requested + 1, actor_id = $1
		WHERE repository_id = $2 AND enabled = $3`, actorID, repoID, true)
	return store.Normalize(err)
}
