package api

import (
	"context"
	"strconv"
	"strings"

	"forgeapi/internal/markdown"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// issues fills found with the issues and pull requests of repo among
// numbers, in one query; web is the web root of their addresses.
func (h *Handler) issues(ctx context.Context, repo *repos.Repository, web string, numbers []int64, found map[int64]markdown.Issue) error {
	args := []any{repo.ID}
	params := make([]string, len(numbers))
	for i, n := range numbers {
		args = append(args, n)
		params[i] = "$" + strconv.Itoa(len(args))
	}
	rows, err := h.DB.QueryContext(ctx, store.Dynamic+`SELECT number, is_pull_request FROM issues
		WHERE repository_id = $1 AND number IN (`+strings.Join(params, ", ")+`)`, args...)
	if err != nil {
		return store.Normalize(err)
	}
	defer rows.Close()
	base := web + "/" + repo.FullName()
	for rows.Next() {
		var n int64
		var pull bool
		if err := rows.Scan(&n, &pull); err != nil {
			return store.Normalize(err)
		}
		kind := "/issues/"
		if pull {
			kind = "/pull/"
		}
		found[n] = markdown.Issue{URL: base + kind + strconv.FormatInt(n, 10), PullRequest: pull}
	}
	return store.Normalize(rows.Err())
}
