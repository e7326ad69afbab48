package statuses

import (
	"context"
	"strconv"
	"strings"

	"forgeapi/internal/store"
)

// LatestOf returns Latest of each of the repository's commits shas, by
// sha (none for a commit without statuses), in one query.
func (s *Service) LatestOf(ctx context.Context, repoID int64, shas []string) (map[string][]*Status, error) {
	out := make(map[string][]*Status, len(shas))
	if len(shas) == 0 {
		return out, nil
	}
	args := []any{repoID}
	params := make([]string, len(shas))
	for i, sha := range shas {
		args = append(args, sha)
		params[i] = "$" + strconv.Itoa(len(args))
	}
	list, err := s.query(ctx, store.Dynamic+`SELECT `+statusColumns+` FROM commit_statuses
		WHERE id IN (SELECT max(id) FROM commit_statuses WHERE repository_id = $1 AND sha IN (`+strings.Join(params, ", ")+`)
		GROUP BY sha, lower(context)) ORDER BY lower(context)`, args...)
	if err != nil {
		return nil, err
	}
	for _, st := range list {
		out[st.SHA] = append(out[st.SHA], st)
	}
	return out, nil
}
