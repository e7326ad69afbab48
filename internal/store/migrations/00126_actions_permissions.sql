-- Actions permissions of a repository, an organization or an enterprise
-- (issue 51):
-- whether Actions run, which actions they may use, the GITHUB_TOKEN's
-- default permissions, the access other repositories have to this one's
-- actions, and artifact and log retention. A place without a row has the
-- platform's defaults (enabled, all actions, read, 90 days).

-- +goose Up
CREATE TABLE actions_policies (
    scope                        TEXT NOT NULL,   -- repo | org | enterprise
    scope_id                     BIGINT NOT NULL,
    repository_id                BIGINT REFERENCES repositories (id) ON DELETE CASCADE,
    organization_id              BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    enterprise_id                BIGINT REFERENCES enterprises (id) ON DELETE CASCADE,
    enabled                      BOOLEAN NOT NULL DEFAULT TRUE,
    -- organizations' enabled repositories, enterprises' enabled
    -- organizations: all | none | selected
    enabled_repositories         TEXT NOT NULL DEFAULT 'all',
    allowed_actions              TEXT NOT NULL DEFAULT 'all', -- all | local_only | selected
    sha_pinning_required         BOOLEAN NOT NULL DEFAULT FALSE,
    github_owned_allowed         BOOLEAN NOT NULL DEFAULT TRUE,
    verified_allowed             BOOLEAN NOT NULL DEFAULT FALSE,
    patterns_allowed             TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    default_workflow_permissions TEXT NOT NULL DEFAULT 'read',
    can_approve_reviews          BOOLEAN NOT NULL DEFAULT FALSE,
    access_level                 TEXT NOT NULL DEFAULT 'none',
    retention_days               INTEGER NOT NULL DEFAULT 90,
    updated_at                   {{time}} NOT NULL,
    PRIMARY KEY (scope, scope_id)
);

CREATE TABLE actions_enabled_repositories (
    organization_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    repository_id   BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (organization_id, repository_id)
);

CREATE TABLE actions_enabled_organizations (
    enterprise_id   BIGINT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    organization_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    PRIMARY KEY (enterprise_id, organization_id)
);

-- +goose Down
DROP TABLE actions_enabled_organizations;
DROP TABLE actions_enabled_repositories;
DROP TABLE actions_policies;
