// Package orgmigration serves organization migrations: an
// organization owner starts an export of repositories, a background
// Exporter writes the migration archive (see package archive) to blob
// storage, the owner downloads it through a signed, expiring URL, and
// repositories locked for the migration are unlocked one by one.
//
// A migration row is both the API resource and the export's work item:
// the Exporter claims pending rows with a lease (pending -> exporting ->
// exported | failed), so a crash or a restart only delays an export, and
// on PostgreSQL each export runs on one server. Archives are deleted seven
// days after export; the migration stays listable.
package orgmigration

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/auth"
	"forgeapi/internal/blob"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
	"forgeapi/internal/worker"
)

// ArchiveLifetime is how long an archive is kept after its export.
const ArchiveLifetime = 7 * 24 * time.Hour

// MaxRepositories is the most repositories one migration may name.
const MaxRepositories = 1000

// MaxRepositoryNameLength bounds an entry of repositories: a repository
// name or "org/name" (a login has at most 39 characters).
const MaxRepositoryNameLength = 39 + 1 + repos.MaxNameLength

// Service holds the organization migrations of one store.
type Service struct {
	DB    *store.DB
	Repos *repos.Service
	// Blobs stores the archives. Nil means no blob storage is configured:
	// starting a migration answers 422.
	Blobs  blob.Store
	Now    func() time.Time // clock; nil means time.Now
	Logger *slog.Logger     // nil means slog.Default()
	// CloneTokens mints the temp_clone_token of the repositories shown
	// to callers with admin rights on them; nil shows "".
	CloneTokens *auth.CloneTokens

	wake *worker.Signal // wakes the Exporter of this process
}

// NewService returns a Service over db and the repositories' git storage.
func NewService(db *store.DB, r *repos.Service, now func() time.Time, logger *slog.Logger) *Service {
	return &Service{DB: db, Repos: r, Now: now, Logger: logger, wake: worker.NewSignal()}
}

func (s *Service) now() time.Time {
	now := time.Now
	if s.Now != nil {
		now = s.Now
	}
	return now().UTC().Truncate(time.Microsecond)
}

// ReleaseLeases ends now the export leases that a killed process held, so
// that the exporter takes those migrations up again at once instead of
// when the lease ends, and reports how many it ended. It reads the
// exporting migrations' range of org_migrations_work.
// Only the one server of a database may call it, knowing the lease
// holders dead (store.DB.ClaimServer's exclusive).
func (s *Service) ReleaseLeases(ctx context.Context) (int64, error) {
	return store.Affected(s.DB.ExecContext(ctx, `UPDATE org_migrations SET lease_until = $1
		WHERE id IN (SELECT id FROM org_migrations WHERE state = $2 AND lease_until > $1)`, s.now(), StateExporting))
}

func (s *Service) logger() *slog.Logger {
	if s.Logger != nil {
		return s.Logger
	}
	return slog.Default()
}

// notify wakes the Exporter of this process; it never blocks.
func (s *Service) notify() { s.wake.Wake() }

// Request is a request to start a migration, as the client sent it.
type Request struct {
	// Repositories names the repositories, as NAME or ORG/NAME; nil
	// means the field was absent.
	Repositories []string
	Flags        Flags
	Exclude      []string
}

// errNoBlobStorage is the 422 of rule 3.
func errNoBlobStorage() error {
	return apierr.Unprocessable("A blob storage provider must be configured before starting a migration; " +
		"the server's migration archive storage is not available. Ask the administrator to check its --blob setting.")
}

// CheckStorage returns nil when archives can be written, or the 422 that
// rule 3 asks for (the cause is logged, not sent).
func (s *Service) CheckStorage(ctx context.Context) error {
	if s.Blobs == nil {
		return errNoBlobStorage()
	}
	if err := s.Blobs.Check(ctx); err != nil {
		s.logger().Warn("migration blob storage is not usable", "error", err)
		return errNoBlobStorage()
	}
	return nil
}

// Start validates req and creates a pending migration of org's
// repositories, locking them in the same transaction when asked, and
// wakes the Exporter once the migration is committed.
func (s *Service) Start(ctx context.Context, org *accounts.Account, req Request) (*Migration, error) {
	if err := validateRequest(req); err != nil {
		return nil, err
	}
	if err := s.CheckStorage(ctx); err != nil {
		return nil, err
	}
	var m *Migration
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		list, err := resolveRepositories(ctx, tx, org, req.Repositories)
		if err != nil {
			return err
		}
		m, err = insertMigration(ctx, tx, newMigration{GUID: wire.NewGUID(), OrgID: org.ID, Flags: req.Flags,
			Exclude: req.Exclude, Repos: list, Now: s.now()})
		if err != nil {
			return err
		}
		err = auditlog.Record(ctx, tx, auditlog.Entry{OrgID: org.ID, Action: "migration.create",
			Data: map[string]any{"migration_id": m.ID, "repositories": len(list)}})
		if err != nil {
			return err
		}
		tx.AfterCommit(s.notify)
		return nil
	})
	return m, err
}

// validateRequest checks what needs no database.
func validateRequest(req Request) error {
	var fields apierr.Fields
	switch {
	case req.Flags.OrgMetadataOnly && len(req.Repositories) > 0:
		fields.Addf("Migration", "repositories", "repositories must be empty when org_metadata_only is true")
	case req.Flags.OrgMetadataOnly:
	case req.Repositories == nil:
		fields = append(fields, apierr.FieldError{Resource: "Migration", Field: "repositories", Code: apierr.CodeMissingField,
			Message: "repositories is required unless org_metadata_only is true"})
	case len(req.Repositories) == 0:
		fields.Addf("Migration", "repositories", "repositories must name at least one repository of the organization")
	case len(req.Repositories) > MaxRepositories:
		fields.Addf("Migration", "repositories", "a migration may name at most %d repositories", MaxRepositories)
	}
	for i, name := range req.Repositories {
		fields.MaxLength("Migration", fmt.Sprintf("repositories[%d]", i), name, MaxRepositoryNameLength)
	}
	for _, e := range req.Exclude {
		if e != "repositories" {
			fields = append(fields, apierr.FieldError{Resource: "Migration", Field: "exclude", Code: apierr.CodeInvalid,
				Message: fmt.Sprintf("exclude may only contain \"repositories\", not %q", e), Value: e})
		}
	}
	return fields.Err()
}

// resolveRepositories finds the named repositories of org, dropping
// duplicates. Every name that is not a repository of org is a field error
// naming it.
func resolveRepositories(ctx context.Context, q store.Q, org *accounts.Account, names []string) ([]*repos.Repository, error) {
	var fields apierr.Fields
	var out []*repos.Repository
	seen := map[int64]bool{}
	for _, name := range names {
		r, err := repoOfOrg(ctx, q, org, name)
		if errors.Is(err, store.ErrNotFound) {
			fields = append(fields, apierr.FieldError{Resource: "Migration", Field: "repositories", Code: apierr.CodeInvalid,
				Message: fmt.Sprintf("%q is not a repository of the organization %s", name, org.Login), Value: name})
			continue
		}
		if err != nil {
			return nil, err
		}
		if !seen[r.ID] {
			seen[r.ID] = true
			out = append(out, r)
		}
	}
	return out, fields.Err()
}

// repoOfOrg finds a repository named NAME or ORG/NAME (case-insensitive)
// owned by org, or returns store.ErrNotFound.
func repoOfOrg(ctx context.Context, q store.Q, org *accounts.Account, name string) (*repos.Repository, error) {
	if owner, repo, ok := strings.Cut(name, "/"); ok {
		if !strings.EqualFold(owner, org.Login) {
			return nil, store.ErrNotFound
		}
		name = repo
	}
	if !repos.ValidName(name) {
		return nil, store.ErrNotFound
	}
	return repos.ByOwnerAndName(ctx, q, org.Login, name)
}

// Get returns the organization's migration with the id, or a 404.
func (s *Service) Get(ctx context.Context, org *accounts.Account, id int64) (*Migration, error) {
	m, err := migrationByID(ctx, s.DB, org.ID, id)
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound()
	}
	return m, err
}

// Unlock releases the migration's lock on the repository named repoName.
// It is a 404 when the migration does not exist, the repository is not in
// it, or the migration does not hold its lock.
func (s *Service) Unlock(ctx context.Context, org *accounts.Account, id int64, repoName string) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := migrationByID(ctx, tx, org.ID, id); err != nil {
			return err
		}
		return unlockRepo(ctx, tx, id, repoName)
	})
}

// ArchiveURL returns a signed URL of the migration's archive, valid for
// ttl. It is a 404 when the migration has no archive: not exported yet,
// failed, deleted, or past ArchiveLifetime.
func (s *Service) ArchiveURL(ctx context.Context, m *Migration, ttl time.Duration) (string, error) {
	if !m.HasArchive() || s.expired(m) || s.Blobs == nil {
		return "", apierr.NotFound()
	}
	return s.Blobs.URL(ctx, m.ArchiveKey, ttl)
}

// expired reports whether the migration's archive is past its lifetime
// (the expiry job may not have deleted it yet).
func (s *Service) expired(m *Migration) bool {
	return m.ExportedAt != nil && !s.now().Before(m.ExportedAt.Add(ArchiveLifetime))
}

// DeleteArchive deletes the migration's archive. It is a 404 when there is
// no archive to delete.
func (s *Service) DeleteArchive(ctx context.Context, m *Migration) error {
	if !m.HasArchive() || s.Blobs == nil {
		return apierr.NotFound()
	}
	return s.deleteArchive(ctx, m)
}

func (s *Service) deleteArchive(ctx context.Context, m *Migration) error {
	if err := s.Blobs.Delete(ctx, m.ArchiveKey); err != nil {
		return fmt.Errorf("delete archive of migration %d: %w", m.ID, err)
	}
	_, err := markArchiveDeleted(ctx, s.DB, m.ID, s.now())
	return err
}
