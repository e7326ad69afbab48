package repos

import (
	"context"
	"fmt"

	"forgeapi/internal/git/gitread"
	"forgeapi/internal/store"
)

// MeasureSize measures the git data of the repository (gitread.SizeKB of
// its bare repository at dir) and keeps it as the repository's size, in
// tx: the transaction that records the change of the git data (a push,
// a pull request's test merge, git maintenance). Its counts row is
// written first, which on PostgreSQL locks it to the commit, so that of
// two changes recorded at once the one that commits last measured last.
// The measure reads the objects directory (a file status per loose
// object, under SQLite's write lock); git maintenance keeps loose
// objects few.
func MeasureSize(ctx context.Context, tx store.Q, id int64, dir string) error {
	if _, err := tx.ExecContext(ctx, `INSERT INTO repository_counts (repository_id) VALUES ($1)
		ON CONFLICT (repository_id) DO UPDATE SET size_kb = repository_counts.size_kb`, id); err != nil {
		return fmt.Errorf("lock the counts of repository %d: %w", id, err)
	}
	kb, err := gitread.SizeKB(dir)
	if err != nil {
		return fmt.Errorf("measure repository %d: %w", id, err)
	}
	return setSize(ctx, tx, id, kb)
}

// setSize keeps kb as the repository's size.
func setSize(ctx context.Context, q store.Q, id, kb int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO repository_counts (repository_id, size_kb) VALUES ($1, $2)
		ON CONFLICT (repository_id) DO UPDATE SET size_kb = excluded.size_kb`, id, kb)
	if err != nil {
		return fmt.Errorf("keep the size of repository %d: %w", id, err)
	}
	return nil
}

// Unmeasured returns up to limit repositories with an id above after
// whose size was never measured (those that predate migration 00052),
// lowest id first.
func Unmeasured(ctx context.Context, q store.Q, after int64, limit int) ([]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT repository_id FROM repository_counts
		WHERE size_kb IS NULL AND repository_id > $1 ORDER BY repository_id LIMIT $2`, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}
