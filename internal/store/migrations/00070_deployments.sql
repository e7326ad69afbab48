-- Deployments and environments (GET/POST /repos/{owner}/{repo}/deployments,
-- .../environments): an environment of a repository has its protection
-- settings (a wait timer, required reviewers, a deployment branch policy:
-- none, protected branches, or custom name patterns); a deployment names a
-- commit (the sha its ref resolved to when created) and an environment by
-- name, and keeps the statuses posted on it, newest last. A deployment's
-- environment is a name, not a key: deleting an environment leaves its
-- deployments, as on the platform.

-- +goose Up
CREATE TABLE environments (
    id                  {{id}},
    repository_id       BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    name                TEXT NOT NULL,
    wait_timer          INTEGER NOT NULL DEFAULT 0,
    prevent_self_review BOOLEAN NOT NULL DEFAULT FALSE,
    branch_policy       TEXT NOT NULL DEFAULT '', -- '' (any branch) | protected | custom
    created_at          {{time}} NOT NULL,
    updated_at          {{time}} NOT NULL
);
CREATE UNIQUE INDEX environments_name ON environments (repository_id, lower(name));

CREATE TABLE environment_reviewers (
    environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    position       INTEGER NOT NULL,
    kind           TEXT NOT NULL,   -- User | Team
    reviewer_id    BIGINT NOT NULL, -- an account's or a team's id
    PRIMARY KEY (environment_id, position)
);

CREATE TABLE deployment_branch_policies (
    id             {{id}},
    environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    kind           TEXT NOT NULL    -- branch | tag
);
CREATE UNIQUE INDEX deployment_branch_policies_name ON deployment_branch_policies (environment_id, kind, name);

CREATE TABLE deployments (
    id                   {{id}},
    repository_id        BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    sha                  TEXT NOT NULL,
    ref                  TEXT NOT NULL,
    task                 TEXT NOT NULL,
    environment          TEXT NOT NULL,
    original_environment TEXT NOT NULL,
    description          TEXT,
    payload              TEXT NOT NULL,  -- JSON: an object or a string
    transient            BOOLEAN NOT NULL DEFAULT FALSE,
    production           BOOLEAN NOT NULL DEFAULT FALSE,
    creator_id           BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    created_at           {{time}} NOT NULL,
    updated_at           {{time}} NOT NULL
);
CREATE INDEX deployments_repository ON deployments (repository_id, id);
CREATE INDEX deployments_environment ON deployments (repository_id, lower(environment), id);

CREATE TABLE deployment_statuses (
    id              {{id}},
    deployment_id   BIGINT NOT NULL REFERENCES deployments (id) ON DELETE CASCADE,
    state           TEXT NOT NULL,  -- error | failure | inactive | in_progress | queued | pending | success
    description     TEXT NOT NULL DEFAULT '',
    environment     TEXT NOT NULL,
    target_url      TEXT NOT NULL DEFAULT '',
    log_url         TEXT NOT NULL DEFAULT '',
    environment_url TEXT NOT NULL DEFAULT '',
    creator_id      BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    created_at      {{time}} NOT NULL
);
CREATE INDEX deployment_statuses_deployment ON deployment_statuses (deployment_id, id);

-- +goose Down
DROP TABLE deployment_statuses;
DROP TABLE deployments;
DROP TABLE deployment_branch_policies;
DROP TABLE environment_reviewers;
DROP TABLE environments;
