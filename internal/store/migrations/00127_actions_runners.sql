-- Self-hosted runners (issue 51): registration and remove tokens (stored
-- as SHA-256 hashes, expiring an hour after they are made), the runners
-- that registered with them (of a repository, or of an organization and
-- one of its runner groups), their labels, and organizations' runner
-- groups with the repositories they serve. A runner row exists only
-- because a runner registered (POST /_runner/register); its credential
-- is kept hashed too.

-- +goose Up
CREATE TABLE runner_tokens (
    token_hash      TEXT PRIMARY KEY,
    kind            TEXT NOT NULL,   -- registration | remove
    scope           TEXT NOT NULL,   -- repo | org
    scope_id        BIGINT NOT NULL,
    repository_id   BIGINT REFERENCES repositories (id) ON DELETE CASCADE,
    organization_id BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    expires_at      {{time}} NOT NULL,
    created_at      {{time}} NOT NULL
);
CREATE INDEX runner_tokens_expiry ON runner_tokens (expires_at);

CREATE TABLE runner_groups (
    id                         {{id}},
    organization_id            BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name                       TEXT NOT NULL,
    visibility                 TEXT NOT NULL DEFAULT 'all', -- all | selected | private
    is_default                 BOOLEAN NOT NULL DEFAULT FALSE,
    allows_public_repositories BOOLEAN NOT NULL DEFAULT FALSE,
    restricted_to_workflows    BOOLEAN NOT NULL DEFAULT FALSE,
    selected_workflows         TEXT NOT NULL DEFAULT '[]', -- JSON array
    created_at                 {{time}} NOT NULL
);
CREATE UNIQUE INDEX runner_groups_name ON runner_groups (organization_id, lower(name));

CREATE TABLE runner_group_repositories (
    runner_group_id BIGINT NOT NULL REFERENCES runner_groups (id) ON DELETE CASCADE,
    repository_id   BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (runner_group_id, repository_id)
);

CREATE TABLE runners (
    id              {{id}},
    scope           TEXT NOT NULL,   -- repo | org
    scope_id        BIGINT NOT NULL,
    repository_id   BIGINT REFERENCES repositories (id) ON DELETE CASCADE,
    organization_id BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    runner_group_id BIGINT REFERENCES runner_groups (id) ON DELETE SET NULL,
    name            TEXT NOT NULL,
    os              TEXT NOT NULL,
    version         TEXT NOT NULL DEFAULT '',
    status          TEXT NOT NULL DEFAULT 'offline', -- online | offline
    busy            BOOLEAN NOT NULL DEFAULT FALSE,
    ephemeral       BOOLEAN NOT NULL DEFAULT FALSE,
    credential_hash TEXT NOT NULL,
    last_seen_at    {{time}},
    created_at      {{time}} NOT NULL
);
CREATE UNIQUE INDEX runners_name ON runners (scope, scope_id, lower(name));
CREATE UNIQUE INDEX runners_credential ON runners (credential_hash);

CREATE TABLE runner_labels (
    id        {{id}},
    runner_id BIGINT NOT NULL REFERENCES runners (id) ON DELETE CASCADE,
    name      TEXT NOT NULL,
    custom    BOOLEAN NOT NULL
);
CREATE UNIQUE INDEX runner_labels_name ON runner_labels (runner_id, lower(name));

-- +goose Down
DROP TABLE runner_labels;
DROP TABLE runners;
DROP TABLE runner_group_repositories;
DROP TABLE runner_groups;
DROP TABLE runner_tokens;
