-- Organization migrations: each row is both the API resource and the work
-- item of its export job (claimed with a lease, like webhook deliveries).

-- +goose Up
CREATE TABLE org_migrations (
    id                     {{id}},
    guid                   TEXT NOT NULL,
    org_id                 BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    state                  TEXT NOT NULL,             -- pending | exporting | exported | failed
    lock_repositories      BOOLEAN NOT NULL DEFAULT FALSE,
    exclude_metadata       BOOLEAN NOT NULL DEFAULT FALSE,
    exclude_git_data       BOOLEAN NOT NULL DEFAULT FALSE,
    exclude_attachments    BOOLEAN NOT NULL DEFAULT FALSE,
    exclude_releases       BOOLEAN NOT NULL DEFAULT FALSE,
    exclude_owner_projects BOOLEAN NOT NULL DEFAULT FALSE,
    org_metadata_only      BOOLEAN NOT NULL DEFAULT FALSE,
    exclude                TEXT NOT NULL DEFAULT '[]', -- JSON array, as the request gave it
    archive_key            TEXT NOT NULL DEFAULT '',   -- blob key once exported
    archive_size           BIGINT NOT NULL DEFAULT 0,
    exported_at            {{time}},
    archive_deleted_at     {{time}},                   -- set by DELETE .../archive or expiry
    failure_reason         TEXT NOT NULL DEFAULT '',
    attempts               INTEGER NOT NULL DEFAULT 0, -- export claims so far
    lease_owner            TEXT NOT NULL DEFAULT '',
    lease_until            {{time}},
    created_at             {{time}} NOT NULL,
    updated_at             {{time}} NOT NULL
);
CREATE UNIQUE INDEX org_migrations_guid ON org_migrations (guid);
CREATE INDEX org_migrations_org ON org_migrations (org_id, id);
CREATE INDEX org_migrations_work ON org_migrations (state, lease_until);
CREATE INDEX org_migrations_expiry ON org_migrations (state, exported_at);

-- The repositories of a migration, in request order; locked records that
-- this migration holds the repository's migration lock.
CREATE TABLE org_migration_repositories (
    migration_id  BIGINT NOT NULL REFERENCES org_migrations (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    position      INTEGER NOT NULL,
    locked        BOOLEAN NOT NULL DEFAULT FALSE,
    PRIMARY KEY (migration_id, repository_id)
);
CREATE INDEX org_migration_repositories_repo ON org_migration_repositories (repository_id, locked);

-- +goose Down
DROP TABLE org_migration_repositories;
DROP TABLE org_migrations;
