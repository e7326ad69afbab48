package checks

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/store"
)

const suiteColumns = `id, repository_id, app_id, head_sha, head_branch, before_sha, after_sha, head_commit,
	status, conclusion, created_at, updated_at`

func scanSuite(row interface{ Scan(...any) error }) (*Suite, error) {
	var s Suite
	var head string
	err := row.Scan(&s.ID, &s.RepoID, &s.AppID, &s.HeadSHA, &s.HeadBranch, &s.Before, &s.After, &head,
		&s.Status, &s.Conclusion, &s.CreatedAt, &s.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	s.HeadCommit = json.RawMessage(head)
	return &s, nil
}

// SuiteByID returns the repository's suite with the id; store.ErrNotFound
// when it has none.
func SuiteByID(ctx context.Context, q store.Q, repoID, id int64) (*Suite, error) {
	return scanSuite(q.QueryRowContext(ctx, `SELECT `+suiteColumns+` FROM check_suites WHERE id = $1 AND repository_id = $2`, id, repoID))
}

// suiteOf returns the app's suite of the head commit; store.ErrNotFound
// when there is none.
func suiteOf(ctx context.Context, q store.Q, repoID, appID int64, sha string) (*Suite, error) {
	return scanSuite(q.QueryRowContext(ctx, `SELECT `+suiteColumns+` FROM check_suites
		WHERE repository_id = $1 AND head_sha = $2 AND app_id = $3 AND NOT workflow_run`, repoID, sha, appID))
}

// insertSuite stores s unless the app has a suite of the head already,
// and reports whether it did (s.ID is set then).
func insertSuite(ctx context.Context, q store.Q, s *Suite) (bool, error) {
	err := q.QueryRowContext(ctx, `INSERT INTO check_suites (repository_id, app_id, head_sha, head_branch, before_sha,
		after_sha, head_commit, status, conclusion, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
		ON CONFLICT (repository_id, head_sha, app_id) WHERE NOT workflow_run DO NOTHING RETURNING id`,
		s.RepoID, s.AppID, s.HeadSHA, s.HeadBranch, s.Before, s.After, string(s.HeadCommit), s.Status, s.Conclusion,
		s.CreatedAt).Scan(&s.ID)
	if err = store.Normalize(err); err == store.ErrNotFound {
		return false, nil
	}
	s.UpdatedAt = s.CreatedAt
	return err == nil, err
}

// setSuiteState stores the suite's status and conclusion.
func setSuiteState(ctx context.Context, q store.Q, s *Suite, now time.Time) error {
	s.UpdatedAt = now
	_, err := q.ExecContext(ctx, `UPDATE check_suites SET status = $1, conclusion = $2, updated_at = $3 WHERE id = $4`,
		s.Status, s.Conclusion, now, s.ID)
	return store.Normalize(err)
}

// listSuites returns a page of the commit's suites, oldest first, and how
// many there are; appID (0: any) narrows them to one app, name ("": any)
// to the suites with a run of that name.
func listSuites(ctx context.Context, q store.Q, repoID int64, sha string, appID int64, name string, limit, offset int) ([]*Suite, int, error) {
	const where = ` FROM check_suites s WHERE s.repository_id = $1 AND s.head_sha = $2 AND ($3 = 0 OR s.app_id = $3)
		AND ($4 = '' OR EXISTS (SELECT 1 FROM check_runs r WHERE r.check_suite_id = s.id AND r.name = $4))`
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*)`+where, repoID, sha, appID, name).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	rows, err := q.QueryContext(ctx, `SELECT `+prefixed("s.", suiteColumns)+where+` ORDER BY s.id LIMIT $5 OFFSET $6`,
		repoID, sha, appID, name, limit, offset)
	if err != nil {
		return nil, 0, store.Normalize(err)
	}
	defer rows.Close()
	var out []*Suite
	for rows.Next() {
		s, err := scanSuite(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, s)
	}
	return out, total, store.Normalize(rows.Err())
}

// prefixed qualifies each column of a column list with the prefix.
func prefixed(prefix, columns string) string {
	parts := strings.Split(columns, ",")
	for i, p := range parts {
		parts[i] = prefix + strings.TrimSpace(p)
	}
	return strings.Join(parts, ", ")
}

func itoa(n int) string { return strconv.Itoa(n) }

const runColumns = `id, check_suite_id, repository_id, app_id, head_sha, name, external_id, details_url, status,
	conclusion, started_at, completed_at, title, summary, text, annotations_count, actions, created_at, updated_at`

func scanRun(row interface{ Scan(...any) error }) (*Run, error) {
	var r Run
	var actions string
	err := row.Scan(&r.ID, &r.SuiteID, &r.RepoID, &r.AppID, &r.HeadSHA, &r.Name, &r.ExternalID, &r.DetailsURL,
		&r.Status, &r.Conclusion, &r.StartedAt, &r.CompletedAt, &r.Title, &r.Summary, &r.Text, &r.AnnotationsCount,
		&actions, &r.CreatedAt, &r.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if err := json.Unmarshal([]byte(actions), &r.Actions); err != nil {
		return nil, err
	}
	return &r, nil
}

// RunByID returns the repository's run with the id; store.ErrNotFound
// when it has none.
func RunByID(ctx context.Context, q store.Q, repoID, id int64) (*Run, error) {
	return scanRun(q.QueryRowContext(ctx, `SELECT `+runColumns+` FROM check_runs WHERE id = $1 AND repository_id = $2`, id, repoID))
}

func actionsJSON(a []Action) string {
	if a == nil {
		a = []Action{}
	}
	b, _ := json.Marshal(a) // a slice of strings' structs always encodes
	return string(b)
}

// insertRun stores a new run.
func insertRun(ctx context.Context, q store.Q, r *Run) error {
	err := q.QueryRowContext(ctx, `INSERT INTO check_runs (check_suite_id, repository_id, app_id, head_sha, name,
		external_id, details_url, status, conclusion, started_at, completed_at, title, summary, text, annotations_count,
		actions, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $17) RETURNING id`,
		r.SuiteID, r.RepoID, r.AppID, r.HeadSHA, r.Name, r.ExternalID, r.DetailsURL, r.Status, r.Conclusion,
		r.StartedAt, r.CompletedAt, r.Title, r.Summary, r.Text, r.AnnotationsCount, actionsJSON(r.Actions),
		r.CreatedAt).Scan(&r.ID)
	r.UpdatedAt = r.CreatedAt
	if err != nil {
		return store.Normalize(err)
	}
	_, err = q.ExecContext(ctx, `UPDATE check_runs SET latest = FALSE
		WHERE check_suite_id = $1 AND latest = TRUE AND name = $2 AND id <> $3`, r.SuiteID, r.Name, r.ID)
	return store.Normalize(err)
}

// markLatest marks, among the suite's runs of the name, the newest one
// latest (after a run changed its name).
func markLatest(ctx context.Context, q store.Q, suiteID int64, name string) error {
	_, err := q.ExecContext(ctx, `UPDATE check_runs SET latest = (id = (SELECT max(l.id) FROM check_runs l
		WHERE l.check_suite_id = $1 AND l.name = $2)) WHERE check_suite_id = $1 AND name = $2`, suiteID, name)
	return store.Normalize(err)
}

// updateRun stores the run's fields.
func updateRun(ctx context.Context, q store.Q, r *Run) error {
	_, err := q.ExecContext(ctx, `UPDATE check_runs SET name = $1, external_id = $2, details_url = $3, status = $4,
		conclusion = $5, started_at = $6, completed_at = $7, title = $8, summary = $9, text = $10,
		annotations_count = $11, actions = $12, updated_at = $13 WHERE id = $14`,
		r.Name, r.ExternalID, r.DetailsURL, r.Status, r.Conclusion, r.StartedAt, r.CompletedAt, r.Title, r.Summary,
		r.Text, r.AnnotationsCount, actionsJSON(r.Actions), r.UpdatedAt, r.ID)
	return store.Normalize(err)
}

// RunFilter narrows a list of runs.
type RunFilter struct {
	Name   string // check_name; "" for any
	Status string // "" for any
	// All lists every run; otherwise only the latest of each name in
	// each suite.
	All   bool
	AppID int64 // 0 for any
}

// where is the filter's SQL conditions on check_runs r, with its
// arguments numbered after n others.
func (f RunFilter) where(args []any) (string, []any) {
	sql := ""
	if f.Name != "" {
		args = append(args, f.Name)
		sql += ` AND r.name = $` + itoa(len(args))
	}
	if f.Status != "" {
		args = append(args, f.Status)
		sql += ` AND r.status = $` + itoa(len(args))
	}
	if f.AppID != 0 {
		args = append(args, f.AppID)
		sql += ` AND r.app_id = $` + itoa(len(args))
	}
	if !f.All {
		sql += ` AND r.latest = TRUE`
	}
	return sql, args
}

// listRuns returns a page of runs (where is "r.head_sha = ..." or
// "r.check_suite_id = ..." with its args), newest first, and how many
// there are.
func listRuns(ctx context.Context, q store.Q, where string, args []any, f RunFilter, limit, offset int) ([]*Run, int, error) {
	cond, args := f.where(args)
	var total int
	if err := q.QueryRowContext(ctx, store.Dynamic+`SELECT count(*) FROM check_runs r WHERE `+where+cond, args...).Scan(&total); err != nil {
		return nil, 0, store.Normalize(err)
	}
	args = append(args, limit, offset)
	rows, err := q.QueryContext(ctx, store.Dynamic+`SELECT `+prefixed("r.", runColumns)+` FROM check_runs r WHERE `+where+cond+
		` ORDER BY r.id DESC LIMIT $`+itoa(len(args)-1)+` OFFSET $`+itoa(len(args)), args...)
	if err != nil {
		return nil, 0, store.Normalize(err)
	}
	defer rows.Close()
	out := []*Run{}
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, r)
	}
	return out, total, store.Normalize(rows.Err())
}

// latestRunsOfSuite returns the latest run of each name in the suite.
func latestRunsOfSuite(ctx context.Context, q store.Q, suiteID int64) ([]*Run, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+runColumns+` FROM check_runs WHERE check_suite_id = $1 AND latest = TRUE
		ORDER BY id DESC`, suiteID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []*Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, store.Normalize(rows.Err())
}

// latestRunsCount is how many names the suite's runs have: its
// latest_check_runs_count.
func latestRunsCount(ctx context.Context, q store.Q, suiteID int64) (int, error) {
	var n int
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM check_runs WHERE check_suite_id = $1 AND latest = TRUE`, suiteID).Scan(&n)
	return n, store.Normalize(err)
}

// insertAnnotations appends the run's annotations.
func insertAnnotations(ctx context.Context, q store.Q, runID int64, list []Annotation) error {
	for _, a := range list {
		_, err := q.ExecContext(ctx, `INSERT INTO check_annotations (check_run_id, path, start_line, end_line,
			start_column, end_column, annotation_level, title, message, raw_details)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			runID, a.Path, a.StartLine, a.EndLine, a.StartColumn, a.EndColumn, a.AnnotationLevel, a.Title, a.Message, a.RawDetails)
		if err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

// listAnnotations returns a page of the run's annotations, oldest first.
func listAnnotations(ctx context.Context, q store.Q, runID int64, limit, offset int) ([]Annotation, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, path, start_line, end_line, start_column, end_column, annotation_level,
		title, message, raw_details FROM check_annotations WHERE check_run_id = $1 ORDER BY id LIMIT $2 OFFSET $3`,
		runID, limit, offset)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []Annotation{}
	for rows.Next() {
		var a Annotation
		if err := rows.Scan(&a.ID, &a.Path, &a.StartLine, &a.EndLine, &a.StartColumn, &a.EndColumn, &a.AnnotationLevel,
			&a.Title, &a.Message, &a.RawDetails); err != nil {
			return nil, store.Normalize(err)
		}
		out = append(out, a)
	}
	return out, store.Normalize(rows.Err())
}

// autoTrigger reports whether a push creates the app's suites in the
// repository (true unless its preferences say otherwise).
func autoTrigger(ctx context.Context, q store.Q, repoID, appID int64) (bool, error) {
	var on bool
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT auto_trigger FROM check_suite_preferences
		WHERE repository_id = $1 AND app_id = $2`, repoID, appID).Scan(&on))
	if err == store.ErrNotFound {
		return true, nil
	}
	return on, err
}

// Preference is an app's automatic suite creation in a repository.
type Preference struct {
	AppID   int64 `json:"app_id"`
	Setting bool  `json:"setting"`
}

// setPreference stores the app's setting in the repository.
func setPreference(ctx context.Context, q store.Q, repoID int64, p Preference) error {
	_, err := q.ExecContext(ctx, `INSERT INTO check_suite_preferences (repository_id, app_id, auto_trigger)
		VALUES ($1, $2, $3) ON CONFLICT (repository_id, app_id) DO UPDATE SET auto_trigger = excluded.auto_trigger`,
		repoID, p.AppID, p.Setting)
	return store.Normalize(err)
}

// preferences returns the repository's settings, by app id.
func preferences(ctx context.Context, q store.Q, repoID int64) ([]Preference, error) {
	rows, err := q.QueryContext(ctx, `SELECT app_id, auto_trigger FROM check_suite_preferences WHERE repository_id = $1
		ORDER BY app_id`, repoID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	out := []Preference{}
	for rows.Next() {
		var p Preference
		if err := rows.Scan(&p.AppID, &p.Setting); err != nil {
			return nil, store.Normalize(err)
		}
		out = append(out, p)
	}
	return out, store.Normalize(rows.Err())
}
