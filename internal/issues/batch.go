package issues

import (
	"context"
	"strconv"

	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// ByIDs returns the repository's issue rows of those ids, completed as
// ByNumber completes one, by id; ids of no issue of the repository are
// absent. The rows cost one query and their labels and assignees one
// each, whatever their number (their people one each, once).
func ByIDs(ctx context.Context, q store.Q, repo *repos.Repository, ids []int64) (map[int64]*Issue, error) {
	out := make(map[int64]*Issue, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, 0, len(ids)+1)
	for _, id := range ids {
		args = append(args, id)
	}
	args = append(args, repo.ID)
	list, err := collect(scanIssue)(q.QueryContext(ctx, store.Dynamic+`SELECT `+issueColumns+` FROM issues i WHERE i.id IN `+in(len(ids))+
		` AND i.repository_id = $`+strconv.Itoa(len(args)), args...))
	if err != nil {
		return nil, err
	}
	if err := newLoader(q, repo).issues(ctx, list); err != nil {
		return nil, err
	}
	for _, is := range list {
		out[is.ID] = is
	}
	return out, nil
}
