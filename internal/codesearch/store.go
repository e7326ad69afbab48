package codesearch

import (
	"context"
	"fmt"
	"strings"

	"forgeapi/internal/store"
)

// indexedFiles returns the paths of the repository's indexed files with
// their blob SHAs.
func indexedFiles(ctx context.Context, q store.Q, repoID int64) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT path, blob_sha FROM code_files WHERE repository_id = $1`, repoID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	files := map[string]string{}
	for rows.Next() {
		var p, sha string
		if err := rows.Scan(&p, &sha); err != nil {
			return nil, err
		}
		files[p] = sha
	}
	return files, rows.Err()
}

// pathsOf is the paths of files.
func pathsOf(files map[string]string) []string {
	out := make([]string, 0, len(files))
	for p := range files {
		out = append(out, p)
	}
	return out
}

// writeFinal applies the plan to the repository's rows in tx, but for
// the files written in earlier batches: the commits, the paths removed
// and the last batch of files. Every statement is safe to run again: a
// run cut short and done again by the next holder of the lease writes
// the same rows.
func (p indexPlan) writeFinal(ctx context.Context, tx *store.Tx, repoID int64, files []fileRow) error {
	if p.fullHistory {
		if _, err := tx.ExecContext(ctx, `DELETE FROM code_commits WHERE repository_id = $1`, repoID); err != nil {
			return fmt.Errorf("replace indexed commits: %w", store.Normalize(err))
		}
	}
	for _, c := range p.commits {
		parents := strings.Join(c.Parents, " ")
		_, err := tx.ExecContext(ctx, `INSERT INTO code_commits (repository_id, sha, tree_sha, parents, parent_count,
			author_name, author_email, author_date, committer_name, committer_email, committer_date, message)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12) ON CONFLICT (repository_id, sha) DO NOTHING`,
			repoID, c.SHA, c.Tree, parents, len(c.Parents), c.AuthorName, c.AuthorEmail, c.AuthorDate,
			c.CommitterName, c.CommitterEmail, c.CommitterDate, c.Message)
		if err != nil {
			return fmt.Errorf("index commit %s: %w", c.SHA, store.Normalize(err))
		}
	}
	for _, path := range p.removed {
		if _, err := tx.ExecContext(ctx, `DELETE FROM code_files WHERE repository_id = $1 AND path = $2`, repoID, path); err != nil {
			return fmt.Errorf("remove indexed file: %w", store.Normalize(err))
		}
	}
	return writeFiles(ctx, tx, repoID, files)
}

// writeFiles inserts the files, or updates the rows of their paths.
func writeFiles(ctx context.Context, tx *store.Tx, repoID int64, files []fileRow) error {
	for _, f := range files {
		_, err := tx.ExecContext(ctx, `INSERT INTO code_files (repository_id, path, name, extension, blob_sha, size, content)
			VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT (repository_id, path) DO UPDATE
			SET blob_sha = excluded.blob_sha, size = excluded.size, content = excluded.content`,
			repoID, f.Path, f.Name(), f.Extension(), f.BlobSHA, f.Size, f.Content)
		if err != nil {
			return fmt.Errorf("index file: %w", store.Normalize(err))
		}
	}
	return nil
}
