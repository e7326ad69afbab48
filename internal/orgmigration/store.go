package orgmigration

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The states of a migration.
const (
	StatePending   = "pending"
	StateExporting = "exporting"
	StateExported  = "exported"
	StateFailed    = "failed"
)

// Flags are the options of a migration, as the request gave them.
type Flags struct {
	LockRepositories     bool
	ExcludeMetadata      bool
	ExcludeGitData       bool
	ExcludeAttachments   bool
	ExcludeReleases      bool
	ExcludeOwnerProjects bool
	OrgMetadataOnly      bool
}

// Migration is a migration row.
type Migration struct {
	ID               int64
	GUID             string
	OrgID            int64
	State            string
	Flags            Flags
	Exclude          []string
	ArchiveKey       string
	ArchiveSize      int64
	ExportedAt       *time.Time
	ArchiveDeletedAt *time.Time
	FailureReason    string
	Attempts         int
	CreatedAt        time.Time
	UpdatedAt        time.Time
}

// HasArchive reports whether the migration's archive is stored and not
// yet deleted (by the API or by expiry).
func (m *Migration) HasArchive() bool {
	return m.State == StateExported && m.ArchiveKey != "" && m.ArchiveDeletedAt == nil
}

const migrationColumns = `id, guid, org_id, state, lock_repositories, exclude_metadata, exclude_git_data,
	exclude_attachments, exclude_releases, exclude_owner_projects, org_metadata_only, exclude,
	archive_key, archive_size, exported_at, archive_deleted_at, failure_reason, attempts, created_at, updated_at`

func scanMigration(row interface{ Scan(...any) error }) (*Migration, error) {
	var m Migration
	var exclude string
	f := &m.Flags
	err := row.Scan(&m.ID, &m.GUID, &m.OrgID, &m.State, &f.LockRepositories, &f.ExcludeMetadata, &f.ExcludeGitData,
		&f.ExcludeAttachments, &f.ExcludeReleases, &f.ExcludeOwnerProjects, &f.OrgMetadataOnly, &exclude,
		&m.ArchiveKey, &m.ArchiveSize, &m.ExportedAt, &m.ArchiveDeletedAt, &m.FailureReason, &m.Attempts,
		&m.CreatedAt, &m.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if err := json.Unmarshal([]byte(exclude), &m.Exclude); err != nil {
		return nil, err
	}
	if m.Exclude == nil {
		m.Exclude = []string{}
	}
	return &m, nil
}

// newMigration is what insertMigration needs.
type newMigration struct {
	GUID    string
	OrgID   int64
	Flags   Flags
	Exclude []string
	Repos   []*repos.Repository
	Now     time.Time
}

// insertMigration inserts a pending migration with its repositories,
// locking them when the flags ask for it.
func insertMigration(ctx context.Context, q store.Q, n newMigration) (*Migration, error) {
	exclude, err := json.Marshal(n.Exclude)
	if err != nil {
		return nil, err
	}
	f := n.Flags
	m, err := scanMigration(q.QueryRowContext(ctx, `
		INSERT INTO org_migrations (guid, org_id, state, lock_repositories, exclude_metadata, exclude_git_data,
			exclude_attachments, exclude_releases, exclude_owner_projects, org_metadata_only, exclude, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $12)
		RETURNING `+migrationColumns,
		n.GUID, n.OrgID, StatePending, f.LockRepositories, f.ExcludeMetadata, f.ExcludeGitData,
		f.ExcludeAttachments, f.ExcludeReleases, f.ExcludeOwnerProjects, f.OrgMetadataOnly, string(exclude), n.Now))
	if err != nil {
		return nil, err
	}
	lock := f.LockRepositories && !f.OrgMetadataOnly
	for i, r := range n.Repos {
		if _, err := q.ExecContext(ctx, `
			INSERT INTO org_migration_repositories (migration_id, repository_id, position, locked)
			VALUES ($1, $2, $3, $4)`, m.ID, r.ID, i, lock); err != nil {
			return nil, err
		}
		if lock {
			if err := repos.SetMigrationLock(ctx, q, r.ID, true); err != nil {
				return nil, err
			}
		}
	}
	return m, nil
}

// migrationByID returns the organization's migration with the id, or
// store.ErrNotFound.
func migrationByID(ctx context.Context, q store.Q, orgID, id int64) (*Migration, error) {
	return scanMigration(q.QueryRowContext(ctx,
		`SELECT `+migrationColumns+` FROM org_migrations WHERE org_id = $1 AND id = $2`, orgID, id))
}

// listMigrations returns a page of the organization's migrations, most
// recent first, and the total count.
func listMigrations(ctx context.Context, q store.Q, orgID int64, limit, offset int) ([]*Migration, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM org_migrations WHERE org_id = $1`, orgID).Scan(&total); err != nil {
		return nil, 0, err
	}
	rows, err := q.QueryContext(ctx, `SELECT `+migrationColumns+` FROM org_migrations
		WHERE org_id = $1 ORDER BY id DESC LIMIT $2 OFFSET $3`, orgID, limit, offset)
	if err != nil {
		return nil, 0, err
	}
	defer rows.Close()
	var out []*Migration
	for rows.Next() {
		m, err := scanMigration(rows)
		if err != nil {
			return nil, 0, err
		}
		out = append(out, m)
	}
	return out, total, rows.Err()
}

// migrationRepoIDs returns the ids of a page of the migration's
// repositories, in request order, and their total count.
func migrationRepoIDs(ctx context.Context, q store.Q, migrationID int64, limit, offset int) ([]int64, int, error) {
	var total int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM org_migration_repositories WHERE migration_id = $1`,
		migrationID).Scan(&total); err != nil {
		return nil, 0, err
	}
	ids, err := queryIDs(ctx, q, `SELECT repository_id FROM org_migration_repositories
		WHERE migration_id = $1 ORDER BY position LIMIT $2 OFFSET $3`, migrationID, limit, offset)
	return ids, total, err
}

func queryIDs(ctx context.Context, q store.Q, query string, args ...any) ([]int64, error) {
	rows, err := q.QueryContext(ctx, query, args...)
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

// migrationRepos returns the migration's repositories in request order.
// Repositories deleted since the migration was created are left out.
func migrationRepos(ctx context.Context, q store.Q, migrationID int64) ([]*repos.Repository, error) {
	ids, err := queryIDs(ctx, q, `SELECT repository_id FROM org_migration_repositories
		WHERE migration_id = $1 ORDER BY position`, migrationID)
	if err != nil {
		return nil, err
	}
	out := make([]*repos.Repository, 0, len(ids))
	for _, id := range ids {
		r, err := repos.ByID(ctx, q, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// unlockRepo releases the migration's lock on the repository named name.
// It returns store.ErrNotFound when the repository is not in the
// migration or the migration does not hold its lock. The repository
// itself is unlocked once no migration holds a lock on it.
func unlockRepo(ctx context.Context, q store.Q, migrationID int64, name string) error {
	var repoID int64
	err := q.QueryRowContext(ctx, `
		SELECT mr.repository_id FROM org_migration_repositories mr
		JOIN repositories r ON r.id = mr.repository_id
		WHERE mr.migration_id = $1 AND lower(r.name) = lower($2) AND mr.locked`, migrationID, name).Scan(&repoID)
	if err != nil {
		return store.Normalize(err)
	}
	if _, err := q.ExecContext(ctx, `UPDATE org_migration_repositories SET locked = $1
		WHERE migration_id = $2 AND repository_id = $3`, false, migrationID, repoID); err != nil {
		return err
	}
	var others int
	if err := q.QueryRowContext(ctx, `SELECT count(*) FROM org_migration_repositories
		WHERE repository_id = $1 AND locked`, repoID).Scan(&others); err != nil {
		return err
	}
	if others > 0 {
		return nil
	}
	return repos.SetMigrationLock(ctx, q, repoID, false)
}

// markArchiveDeleted records that the migration's archive is gone. It
// reports whether the row still had an archive.
func markArchiveDeleted(ctx context.Context, q store.Q, id int64, now time.Time) (bool, error) {
	res, err := q.ExecContext(ctx, `UPDATE org_migrations SET archive_deleted_at = $1, updated_at = $1
		WHERE id = $2 AND archive_deleted_at IS NULL`, now, id)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
