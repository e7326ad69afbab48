package codescanning

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/store"
)

// args builds a statement's numbered placeholders.
type args []any

func (a *args) add(v any) string { *a = append(*a, v); return "$" + strconv.Itoa(len(*a)) }

func utc(t sql.NullTime) *time.Time {
	if !t.Valid {
		return nil
	}
	u := t.Time.UTC()
	return &u
}

// --- uploads

func insertUpload(ctx context.Context, q store.Q, u *Upload, sarif []byte) error {
	_, err := q.ExecContext(ctx, `INSERT INTO code_scanning_sarifs (id, repository_id, commit_sha, ref, tool_name, sarif, uploader_id, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, u.ID, u.RepoID, u.CommitSHA, u.Ref, u.ToolName, string(sarif), u.UploaderID, u.CreatedAt)
	return store.Normalize(err)
}

// uploadByID returns the repository's upload, or store.ErrNotFound.
func uploadByID(ctx context.Context, q store.Q, repoID int64, id string) (*Upload, error) {
	var u Upload
	var errs string
	err := q.QueryRowContext(ctx, `SELECT id, repository_id, commit_sha, ref, tool_name, status, errors, uploader_id, created_at
		FROM code_scanning_sarifs WHERE repository_id = $1 AND id = $2`, repoID, id).
		Scan(&u.ID, &u.RepoID, &u.CommitSHA, &u.Ref, &u.ToolName, &u.Status, &errs, &u.UploaderID, &u.CreatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if err := json.Unmarshal([]byte(errs), &u.Errors); err != nil {
		return nil, fmt.Errorf("upload errors: %w", err)
	}
	return &u, nil
}

// --- analyses

const analysisColumns = `an.id, an.repository_id, an.sarif_id, an.ref, an.commit_sha, an.category, an.tool_name, an.tool_version,
	an.tool_guid, an.results_count, an.rules_count, an.created_at,
	an.id = (SELECT MAX(b.id) FROM code_scanning_analyses b WHERE b.repository_id = an.repository_id AND b.ref = an.ref
		AND b.tool_name = an.tool_name AND b.category = an.category)`

func scanAnalysis(row store.Scanner) (*Analysis, error) {
	var a Analysis
	err := row.Scan(&a.ID, &a.RepoID, &a.SARIFID, &a.Ref, &a.CommitSHA, &a.Category, &a.ToolName, &a.ToolVersion,
		&a.ToolGUID, &a.ResultsCount, &a.RulesCount, &a.CreatedAt, &a.Deletable)
	a.CreatedAt = a.CreatedAt.UTC()
	return &a, store.Normalize(err)
}

func insertAnalysis(ctx context.Context, q store.Q, a *Analysis) error {
	return store.Normalize(q.QueryRowContext(ctx, `INSERT INTO code_scanning_analyses (repository_id, sarif_id, ref, commit_sha, category,
		tool_name, tool_version, tool_guid, results_count, rules_count, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11) RETURNING id`, a.RepoID, a.SARIFID, a.Ref, a.CommitSHA, a.Category,
		a.ToolName, a.ToolVersion, a.ToolGUID, a.ResultsCount, a.RulesCount, a.CreatedAt).Scan(&a.ID))
}

// analysisByID returns the repository's analysis, or store.ErrNotFound.
func analysisByID(ctx context.Context, q store.Q, repoID, id int64) (*Analysis, error) {
	return scanAnalysis(q.QueryRowContext(ctx, `SELECT `+analysisColumns+` FROM code_scanning_analyses an
		WHERE an.repository_id = $1 AND an.id = $2`, repoID, id))
}

// AnalysisFilter is the analyses list's query.
type AnalysisFilter struct {
	ToolName  string
	ToolGUID  string
	Ref       string
	SARIFID   string
	Ascending bool
}

func listAnalyses(ctx context.Context, q store.Q, repoID int64, f AnalysisFilter, limit, offset int) ([]*Analysis, bool, error) {
	var a args
	where := []string{"an.repository_id = " + a.add(repoID)}
	for col, v := range map[string]string{"an.tool_name": f.ToolName, "an.tool_guid": f.ToolGUID, "an.ref": f.Ref, "an.sarif_id": f.SARIFID} {
		if v != "" {
			where = append(where, col+" = "+a.add(v))
		}
	}
	dir := " DESC"
	if f.Ascending {
		dir = " ASC"
	}
	rows, err := q.QueryContext(ctx, `SELECT `+analysisColumns+` FROM code_scanning_analyses an WHERE `+strings.Join(where, " AND ")+
		` ORDER BY an.id`+dir+` LIMIT `+a.add(limit+1)+` OFFSET `+a.add(offset), a...)
	return store.ScanPage(rows, err, limit, scanAnalysis)
}

// previousInSet is the analysis before an in its set, nil for none.
func previousInSet(ctx context.Context, q store.Q, an *Analysis) (*Analysis, error) {
	p, err := scanAnalysis(q.QueryRowContext(ctx, `SELECT `+analysisColumns+` FROM code_scanning_analyses an
		WHERE an.repository_id = $1 AND an.ref = $2 AND an.tool_name = $3 AND an.category = $4 AND an.id < $5
		ORDER BY an.id DESC LIMIT 1`, an.RepoID, an.Ref, an.ToolName, an.Category, an.ID))
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	return p, err
}

// --- alerts

const alertColumns = `a.id, a.repository_id, a.number, a.tool_name, a.tool_version, a.tool_guid, a.rule_id, a.rule_name,
	a.rule_severity, a.security_severity_level, a.rule_description, a.rule_full_description, a.rule_tags, a.rule_help,
	a.rule_help_uri, a.fingerprint, a.state, a.dismissed, a.dismissed_by_id, a.dismissed_at, a.dismissed_reason,
	a.dismissed_comment, a.fixed_at, a.created_at, a.updated_at`

func scanAlert(row store.Scanner) (*Alert, error) {
	var a Alert
	var tags string
	var dismissedAt, fixedAt sql.NullTime
	err := row.Scan(&a.ID, &a.RepoID, &a.Number, &a.ToolName, &a.ToolVersion, &a.ToolGUID, &a.Rule.ID, &a.Rule.Name,
		&a.Rule.Severity, &a.Rule.SecuritySeverityLevel, &a.Rule.Description, &a.Rule.FullDescription, &tags, &a.Rule.Help,
		&a.Rule.HelpURI, &a.Fingerprint, &a.State, &a.Dismissed, &a.DismissedByID, &dismissedAt, &a.DismissedReason,
		&a.DismissedComment, &fixedAt, &a.CreatedAt, &a.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if err := json.Unmarshal([]byte(tags), &a.Rule.Tags); err != nil {
		return nil, fmt.Errorf("rule tags: %w", err)
	}
	a.DismissedAt, a.FixedAt = utc(dismissedAt), utc(fixedAt)
	a.CreatedAt, a.UpdatedAt = a.CreatedAt.UTC(), a.UpdatedAt.UTC()
	return &a, nil
}

// alertByNumber returns the repository's alert with its most recent
// instance, or store.ErrNotFound.
func alertByNumber(ctx context.Context, q store.Q, repoID, number int64) (*Alert, error) {
	a, err := scanAlert(q.QueryRowContext(ctx, `SELECT `+alertColumns+` FROM code_scanning_alerts a
		WHERE a.repository_id = $1 AND a.number = $2`, repoID, number))
	if err != nil {
		return nil, err
	}
	return a, recentInstances(ctx, q, []*Alert{a})
}

// ensureAlert returns the repository's alert of the result's identity,
// making it (with the next number) when there is none.
func ensureAlert(ctx context.Context, tx *store.Tx, repoID int64, run *Run, r *Result, now time.Time) (*Alert, bool, error) {
	a, err := scanAlert(tx.QueryRowContext(ctx, `SELECT `+alertColumns+` FROM code_scanning_alerts a
		WHERE a.repository_id = $1 AND a.tool_name = $2 AND a.rule_id = $3 AND a.fingerprint = $4`,
		repoID, run.ToolName, r.Rule.ID, r.Fingerprint))
	if err == nil {
		return a, false, nil
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, false, err
	}
	a = &Alert{RepoID: repoID, ToolName: run.ToolName, ToolVersion: run.ToolVersion, ToolGUID: run.ToolGUID, Rule: r.Rule,
		Fingerprint: r.Fingerprint, State: StateOpen, CreatedAt: now, UpdatedAt: now}
	if err := tx.QueryRowContext(ctx, `SELECT COALESCE(MAX(number), 0) + 1 FROM code_scanning_alerts WHERE repository_id = $1`,
		repoID).Scan(&a.Number); err != nil {
		return nil, false, store.Normalize(err)
	}
	tags, err := json.Marshal(r.Rule.Tags)
	if err != nil {
		return nil, false, err
	}
	err = tx.QueryRowContext(ctx, `INSERT INTO code_scanning_alerts (repository_id, number, tool_name, tool_version, tool_guid,
		rule_id, rule_name, rule_severity, security_severity_level, rule_description, rule_full_description, rule_tags, rule_help,
		rule_help_uri, fingerprint, state, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17) RETURNING id`,
		repoID, a.Number, a.ToolName, a.ToolVersion, a.ToolGUID, r.Rule.ID, r.Rule.Name, r.Rule.Severity, r.Rule.SecuritySeverityLevel,
		r.Rule.Description, r.Rule.FullDescription, string(tags), r.Rule.Help, r.Rule.HelpURI, r.Fingerprint, StateOpen, now).Scan(&a.ID)
	if err != nil {
		return nil, false, fmt.Errorf("insert code scanning alert: %w", store.Normalize(err))
	}
	return a, true, nil
}

func insertInstance(ctx context.Context, tx *store.Tx, alertID, analysisID int64, r *Result) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO code_scanning_instances (alert_id, analysis_id, message, path, start_line, end_line,
		start_column, end_column) VALUES ($1, $2, $3, $4, $5, $6, $7, $8) ON CONFLICT (alert_id, analysis_id) DO NOTHING`,
		alertID, analysisID, r.Message, r.Path, r.StartLine, r.EndLine, r.StartColumn, r.EndColumn)
	return store.Normalize(err)
}

// openExpr is true for an alert that the latest analysis of one of its
// sets still has.
const openExpr = `EXISTS (SELECT 1 FROM code_scanning_instances i JOIN code_scanning_analyses an ON an.id = i.analysis_id
	WHERE i.alert_id = a.id AND an.id = (SELECT MAX(b.id) FROM code_scanning_analyses b WHERE b.repository_id = an.repository_id
		AND b.ref = an.ref AND b.tool_name = an.tool_name AND b.category = an.category))`

// settle brings the state of the repository's alerts of the tool to
// their analyses: open while the latest analysis of a set has them, fixed
// once none does (dismissed ones keep their state); alerts no analysis
// has any more are deleted. It returns the alerts that became fixed and
// those that opened again.
func settle(ctx context.Context, tx *store.Tx, repoID int64, tool string, now time.Time) (fixed, reopened []*Alert, err error) {
	if _, err := tx.ExecContext(ctx, `DELETE FROM code_scanning_alerts WHERE repository_id = $1 AND tool_name = $2
		AND NOT EXISTS (SELECT 1 FROM code_scanning_instances i WHERE i.alert_id = code_scanning_alerts.id)`, repoID, tool); err != nil {
		return nil, nil, store.Normalize(err)
	}
	rows, err := tx.QueryContext(ctx, `SELECT `+alertColumns+`, `+openExpr+` FROM code_scanning_alerts a
		WHERE a.repository_id = $1 AND a.tool_name = $2 ORDER BY a.number`, repoID, tool)
	if err != nil {
		return nil, nil, store.Normalize(err)
	}
	var changed []*Alert
	for rows.Next() {
		var open bool
		a, err := scanAlertWith(rows, &open)
		if err != nil {
			rows.Close()
			return nil, nil, err
		}
		switch {
		case a.State == StateOpen && !open:
			a.State, a.FixedAt = StateFixed, &now
			fixed = append(fixed, a)
		case a.State == StateFixed && open:
			a.State, a.FixedAt = StateOpen, nil
			reopened = append(reopened, a)
		default:
			continue
		}
		a.UpdatedAt = now
		changed = append(changed, a)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, nil, store.Normalize(err)
	}
	for _, a := range changed {
		if err := writeState(ctx, tx, a); err != nil {
			return nil, nil, err
		}
	}
	return fixed, reopened, nil
}

// scanAlertWith scans an alert followed by one more column.
func scanAlertWith(row store.Scanner, extra any) (*Alert, error) {
	return scanAlert(scanFunc(func(dest ...any) error { return row.Scan(append(dest, extra)...) }))
}

type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// writeState writes the alert's state and dismissal.
func writeState(ctx context.Context, tx *store.Tx, a *Alert) error {
	_, err := tx.ExecContext(ctx, `UPDATE code_scanning_alerts SET state = $1, dismissed = $2, dismissed_by_id = $3, dismissed_at = $4,
		dismissed_reason = $5, dismissed_comment = $6, fixed_at = $7, updated_at = $8 WHERE id = $9`,
		a.State, a.Dismissed, a.DismissedByID, a.DismissedAt, a.DismissedReason, a.DismissedComment, a.FixedAt, a.UpdatedAt, a.ID)
	return store.Normalize(err)
}

// isOpen reports whether the latest analysis of one of the alert's sets
// has it.
func isOpen(ctx context.Context, q store.Q, alertID int64) (bool, error) {
	var open bool
	err := q.QueryRowContext(ctx, `SELECT `+openExpr+` FROM code_scanning_alerts a WHERE a.id = $1`, alertID).Scan(&open)
	return open, store.Normalize(err)
}

// AlertScope is what an alert list covers: a repository or an
// organization's repositories with code scanning on.
type AlertScope struct {
	RepoID int64
	OrgID  int64
}

// AlertFilter is an alert list's query.
type AlertFilter struct {
	ToolName  string
	ToolGUID  string
	Ref       string
	State     string // open, dismissed, fixed; closed is dismissed or fixed
	Severity  string
	Sort      string // created, updated, number
	Ascending bool
}

func listAlerts(ctx context.Context, q store.Q, s AlertScope, f AlertFilter, limit, offset int) ([]*Alert, bool, error) {
	var a args
	var where []string
	if s.RepoID != 0 {
		where = append(where, "a.repository_id = "+a.add(s.RepoID))
	} else {
		where = append(where, "r.owner_id = "+a.add(s.OrgID))
	}
	where = append(where, "r.advanced_security = "+a.add(true))
	if f.ToolName != "" {
		where = append(where, "a.tool_name = "+a.add(f.ToolName))
	}
	if f.ToolGUID != "" {
		where = append(where, "a.tool_guid = "+a.add(f.ToolGUID))
	}
	switch f.State {
	case "":
	case "closed":
		where = append(where, "a.state IN ("+a.add(StateDismissed)+", "+a.add(StateFixed)+")")
	default:
		where = append(where, "a.state = "+a.add(f.State))
	}
	switch f.Severity {
	case "":
	case "critical", "high", "medium", "low":
		where = append(where, "a.security_severity_level = "+a.add(f.Severity))
	default:
		where = append(where, "a.rule_severity = "+a.add(f.Severity))
	}
	if f.Ref != "" {
		where = append(where, `EXISTS (SELECT 1 FROM code_scanning_instances i JOIN code_scanning_analyses an ON an.id = i.analysis_id
			WHERE i.alert_id = a.id AND an.ref = `+a.add(f.Ref)+`)`)
	}
	order := map[string]string{"": "a.created_at", "created": "a.created_at", "updated": "a.updated_at", "number": "a.number"}[f.Sort]
	dir := " DESC"
	if f.Ascending {
		dir = " ASC"
	}
	rows, err := q.QueryContext(ctx, `SELECT `+alertColumns+` FROM code_scanning_alerts a JOIN repositories r ON r.id = a.repository_id
		WHERE `+strings.Join(where, " AND ")+` ORDER BY `+order+dir+`, a.id`+dir+` LIMIT `+a.add(limit+1)+` OFFSET `+a.add(offset), a...)
	if err != nil {
		return nil, false, store.Normalize(err)
	}
	defer rows.Close()
	var out []*Alert
	for rows.Next() {
		al, err := scanAlert(rows)
		if err != nil {
			return nil, false, err
		}
		out = append(out, al)
	}
	if err := rows.Err(); err != nil {
		return nil, false, store.Normalize(err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, recentInstances(ctx, q, out)
}

// --- instances

const instanceColumns = `i.alert_id, i.message, i.path, i.start_line, i.end_line, i.start_column, i.end_column, ` + analysisColumns

func scanInstance(row store.Scanner) (*Instance, error) {
	var in Instance
	an := &in.Analysis
	err := row.Scan(&in.AlertID, &in.Message, &in.Path, &in.StartLine, &in.EndLine, &in.StartCol, &in.EndCol,
		&an.ID, &an.RepoID, &an.SARIFID, &an.Ref, &an.CommitSHA, &an.Category, &an.ToolName, &an.ToolVersion,
		&an.ToolGUID, &an.ResultsCount, &an.RulesCount, &an.CreatedAt, &an.Deletable)
	an.CreatedAt = an.CreatedAt.UTC()
	in.Open = an.Deletable
	return &in, store.Normalize(err)
}

// recentInstances sets each alert's instance of the latest analysis that
// saw it.
func recentInstances(ctx context.Context, q store.Q, alerts []*Alert) error {
	if len(alerts) == 0 {
		return nil
	}
	byID := map[int64]*Alert{}
	var a args
	var ph []string
	for _, al := range alerts {
		byID[al.ID] = al
		ph = append(ph, a.add(al.ID))
	}
	rows, err := q.QueryContext(ctx, `SELECT `+instanceColumns+` FROM code_scanning_instances i
		JOIN code_scanning_analyses an ON an.id = i.analysis_id
		WHERE i.alert_id IN (`+strings.Join(ph, ", ")+`)
		AND i.analysis_id = (SELECT MAX(j.analysis_id) FROM code_scanning_instances j WHERE j.alert_id = i.alert_id)`, a...)
	if err != nil {
		return store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		in, err := scanInstance(rows)
		if err != nil {
			return err
		}
		byID[in.AlertID].Recent = in
	}
	return store.Normalize(rows.Err())
}

// listInstances returns a page of the alert's instances, one per set
// (ref, tool, category) it was seen in: the latest analysis of the set
// that saw it, open when that is the set's latest, fixed otherwise;
// newest first, and whether more follow. ref, when set, keeps that
// ref's.
func listInstances(ctx context.Context, q store.Q, alertID int64, ref string, limit, offset int) ([]*Instance, bool, error) {
	var a args
	where := "i.alert_id = " + a.add(alertID) + ` AND i.analysis_id = (SELECT MAX(j.analysis_id) FROM code_scanning_instances j
		JOIN code_scanning_analyses bj ON bj.id = j.analysis_id WHERE j.alert_id = i.alert_id AND bj.ref = an.ref
		AND bj.tool_name = an.tool_name AND bj.category = an.category)`
	if ref != "" {
		where += " AND an.ref = " + a.add(ref)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+instanceColumns+` FROM code_scanning_instances i
		JOIN code_scanning_analyses an ON an.id = i.analysis_id WHERE `+where+`
		ORDER BY an.id DESC LIMIT `+a.add(limit+1)+` OFFSET `+a.add(offset), a...)
	return store.ScanPage(rows, err, limit, scanInstance)
}
