package issues

import (
	"context"

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
	args := make([]any, 0, len(ids))
	for _, id := range ids {
		args = append(args, id)
	}
	// The repository is checked here, not in SQL: given both, SQLite
	// walks the repository's index (every issue of it) instead of
	// looking the ids up.
	found, err := collect(scanIssue)(q.QueryContext(ctx, store.Dynamic+`SELECT `+issueColumns+` FROM issues i WHERE i.id IN `+in(len(ids)), args...))
	if err != nil {
		return nil, err
	}
	list := found[:0]
	for _, is := range found {
		if is.RepoID == repo.ID {
			list = append(list, is)
		}
	}
	if err := newLoader(q, repo).issues(ctx, list); err != nil {
		return nil, err
	}
	for _, is := range list {
		out[is.ID] = is
	}
	return out, nil
}
