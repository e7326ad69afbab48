package checks

import (
	"context"
	"strconv"
	"strings"

	"forgeapi/internal/store"
)

// LatestRunsOf returns the latest run of each name in each suite of the
// repository's commits shas, by sha, ordered by name (GraphQL's
// statusCheckRollup), in one query.
func LatestRunsOf(ctx context.Context, q store.Q, repoID int64, shas []string) (map[string][]*Run, error) {
	out := make(map[string][]*Run, len(shas))
	if len(shas) == 0 {
		return out, nil
	}
	args := []any{repoID}
	params := make([]string, len(shas))
	for i, sha := range shas {
		args = append(args, sha)
		params[i] = "$" + strconv.Itoa(len(args))
	}
	rows, err := q.QueryContext(ctx, store.Dynamic+`SELECT `+runColumns+` FROM check_runs
		WHERE repository_id = $1 AND head_sha IN (`+strings.Join(params, ", ")+`) AND latest = TRUE ORDER BY name, id`, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, err
		}
		out[r.HeadSHA] = append(out[r.HeadSHA], r)
	}
	return out, store.Normalize(rows.Err())
}

// SuitesOf returns the suites of the repository's commit, oldest first;
// appID (0: any) narrows them to one app, name ("": any) to the suites
// with a run of that name.
func SuitesOf(ctx context.Context, q store.Q, repoID int64, sha string, appID int64, name string) ([]*Suite, error) {
	list, _, err := listSuites(ctx, q, repoID, sha, appID, name, 1000, 0)
	return list, err
}

// LatestRunsOfSuite returns the latest run of each name in the suite,
// newest first.
func LatestRunsOfSuite(ctx context.Context, q store.Q, suiteID int64) ([]*Run, error) {
	return latestRunsOfSuite(ctx, q, suiteID)
}

// HTMLPath is the web path of the run under the repository's page
// ("/{owner}/{repo}/runs/{id}" follows the repository's URL).
func (r *Run) HTMLPath() string { return "/runs/" + strconv.FormatInt(r.ID, 10) }
