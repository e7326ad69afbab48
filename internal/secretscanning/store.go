package secretscanning

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/store"
)

// alertColumns are the columns scanAlert reads, of alias a.
const alertColumns = `a.id, a.repository_id, a.number, a.secret_type, a.secret, a.state, a.resolution,
	a.resolution_comment, a.resolved_by_id, a.resolved_at, a.created_at, a.updated_at,
	(SELECT count(*) FROM secret_scanning_locations l WHERE l.alert_id = a.id)`

func scanAlert(row store.Scanner) (*Alert, error) {
	var a Alert
	var resolvedAt sql.NullTime
	err := row.Scan(&a.ID, &a.RepoID, &a.Number, &a.SecretType, &a.Secret, &a.State, &a.Resolution,
		&a.ResolutionComment, &a.ResolvedByID, &resolvedAt, &a.CreatedAt, &a.UpdatedAt, &a.Locations)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if resolvedAt.Valid {
		t := resolvedAt.Time.UTC()
		a.ResolvedAt = &t
	}
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return &a, nil
}

// alertByNumber returns the repository's alert of that number, or
// store.ErrNotFound.
func alertByNumber(ctx context.Context, q store.Q, repoID, number int64) (*Alert, error) {
	a, err := scanAlert(q.QueryRowContext(ctx, `SELECT `+alertColumns+` FROM secret_scanning_alerts a
		WHERE a.repository_id = $1 AND a.number = $2`, repoID, number))
	if err != nil {
		return nil, err
	}
	return a, firstLocations(ctx, q, []*Alert{a})
}

// Scope is what a list covers: a repository, an organization's
// repositories or an enterprise's organizations' repositories (one of
// them set).
type Scope struct {
	RepoID       int64
	OrgID        int64
	EnterpriseID int64
}

// Filter is a list's query: the platform's state, secret_type,
// resolution, sort and direction.
type Filter struct {
	State       string
	SecretTypes []string
	Resolutions []string
	Sort        string // "created" (default) or "updated"
	Ascending   bool
}

// listAlerts returns a page of the scope's alerts (of repositories with
// secret scanning on) and whether more follow.
func listAlerts(ctx context.Context, q store.Q, s Scope, f Filter, limit, offset int) ([]*Alert, bool, error) {
	var where []string
	var args []any
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	switch {
	case s.RepoID != 0:
		where = append(where, "a.repository_id = "+arg(s.RepoID))
	case s.OrgID != 0:
		where = append(where, "r.owner_id = "+arg(s.OrgID))
	default:
		where = append(where, "r.owner_id IN (SELECT org_id FROM enterprise_orgs WHERE enterprise_id = "+arg(s.EnterpriseID)+")")
	}
	where = append(where, "r.advanced_security = "+arg(true))
	if f.State != "" {
		where = append(where, "a.state = "+arg(f.State))
	}
	if len(f.SecretTypes) > 0 {
		where = append(where, "a.secret_type IN ("+list(f.SecretTypes, arg)+")")
	}
	if len(f.Resolutions) > 0 {
		where = append(where, "a.resolution IN ("+list(f.Resolutions, arg)+")")
	}
	order := "a.created_at"
	if f.Sort == "updated" {
		order = "a.updated_at"
	}
	dir := " DESC"
	if f.Ascending {
		dir = " ASC"
	}
	rows, err := q.QueryContext(ctx, `SELECT `+alertColumns+` FROM secret_scanning_alerts a
		JOIN repositories r ON r.id = a.repository_id
		WHERE `+strings.Join(where, " AND ")+`
		ORDER BY `+order+dir+`, a.id`+dir+` LIMIT `+arg(limit+1)+` OFFSET `+arg(offset), args...)
	if err != nil {
		return nil, false, store.Normalize(err)
	}
	defer rows.Close()
	var out []*Alert
	for rows.Next() {
		a, err := scanAlert(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, false, store.Normalize(err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, firstLocations(ctx, q, out)
}

// list adds the values as arguments and returns their placeholders.
func list(values []string, arg func(any) string) string {
	ph := make([]string, len(values))
	for i, v := range values {
		ph[i] = arg(v)
	}
	return strings.Join(ph, ", ")
}

const locationColumns = `id, alert_id, path, start_line, end_line, start_column, end_column, blob_sha, commit_sha, created_at`

func scanLocation(row store.Scanner) (*Location, error) {
	var l Location
	err := row.Scan(&l.ID, &l.AlertID, &l.Path, &l.StartLine, &l.EndLine, &l.StartColumn, &l.EndColumn,
		&l.BlobSHA, &l.CommitSHA, &l.CreatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	l.CreatedAt = l.CreatedAt.UTC()
	return &l, nil
}

// firstLocations sets the First location of each alert.
func firstLocations(ctx context.Context, q store.Q, alerts []*Alert) error {
	if len(alerts) == 0 {
		return nil
	}
	byID := map[int64]*Alert{}
	var args []any
	var ph []string
	for _, a := range alerts {
		byID[a.ID] = a
		args = append(args, a.ID)
		ph = append(ph, "$"+strconv.Itoa(len(args)))
	}
	rows, err := q.QueryContext(ctx, `SELECT `+locationColumns+` FROM secret_scanning_locations
		WHERE id IN (SELECT MIN(id) FROM secret_scanning_locations WHERE alert_id IN (`+strings.Join(ph, ", ")+`) GROUP BY alert_id)`, args...)
	if err != nil {
		return store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		l, err := scanLocation(rows)
		if err != nil {
			return err
		}
		byID[l.AlertID].First = l
	}
	return store.Normalize(rows.Err())
}

// listLocations returns a page of the alert's locations, oldest first,
// and whether more follow.
func listLocations(ctx context.Context, q store.Q, alertID int64, limit, offset int) ([]*Location, bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+locationColumns+` FROM secret_scanning_locations
		WHERE alert_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, alertID, limit+1, offset)
	return store.ScanPage(rows, err, limit, scanLocation)
}

// ensureAlert returns the repository's alert of the secret, making it
// (with the next number) when there is none; created reports that.
func ensureAlert(ctx context.Context, tx *store.Tx, repoID int64, secretType, secret string, now time.Time) (*Alert, bool, error) {
	a, err := scanAlert(tx.QueryRowContext(ctx, `SELECT `+alertColumns+` FROM secret_scanning_alerts a
		WHERE a.repository_id = $1 AND a.secret_type = $2 AND a.secret = $3`, repoID, secretType, secret))
	if err == nil {
		return a, false, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, false, err
	}
	var number int64
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(number), 0) + 1 FROM secret_scanning_alerts WHERE repository_id = $1`,
		repoID).Scan(&number); err != nil {
		return nil, false, fmt.Errorf("next secret scanning alert number: %w", store.Normalize(err))
	}
	a = &Alert{RepoID: repoID, Number: number, SecretType: secretType, Secret: secret, State: StateOpen, CreatedAt: now, UpdatedAt: now}
	err = tx.QueryRowContext(ctx, `INSERT INTO secret_scanning_alerts (repository_id, number, secret_type, secret, state, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`, repoID, number, secretType, secret, StateOpen, now).Scan(&a.ID)
	if err != nil {
		return nil, false, fmt.Errorf("insert secret scanning alert: %w", store.Normalize(err))
	}
	return a, true, nil
}

// addLocation records the location unless the alert has it already, and
// reports whether it was new.
func addLocation(ctx context.Context, tx *store.Tx, l *Location) (bool, error) {
	err := tx.QueryRowContext(ctx, `INSERT INTO secret_scanning_locations
		(alert_id, path, start_line, end_line, start_column, end_column, blob_sha, commit_sha, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
		ON CONFLICT (alert_id, blob_sha, path, start_line, start_column) DO NOTHING RETURNING id`,
		l.AlertID, l.Path, l.StartLine, l.EndLine, l.StartColumn, l.EndColumn, l.BlobSHA, l.CommitSHA, l.CreatedAt).Scan(&l.ID)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("insert secret scanning location: %w", store.Normalize(err))
	}
	return true, nil
}

// setState writes the alert's state, resolution, comment and resolver.
func setState(ctx context.Context, tx *store.Tx, a *Alert) error {
	_, err := tx.ExecContext(ctx, `UPDATE secret_scanning_alerts SET state = $1, resolution = $2, resolution_comment = $3,
		resolved_by_id = $4, resolved_at = $5, updated_at = $6 WHERE id = $7`,
		a.State, a.Resolution, a.ResolutionComment, a.ResolvedByID, a.ResolvedAt, a.UpdatedAt, a.ID)
	return store.Normalize(err)
}
