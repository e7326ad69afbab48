-- Pre-receive hooks of the self-managed edition (package prereceive).
-- Environments are where hooks run (the default one is the host, made
-- here); a hook is a script in a repository, enforced site-wide unless it
-- allows organizations (and through them repositories) to override its
-- enforcement, which the two override tables keep.

-- +goose Up
CREATE TABLE pre_receive_environments (
    id          {{id}},
    name        TEXT NOT NULL,
    image_url   TEXT NOT NULL,
    is_default  BOOLEAN NOT NULL DEFAULT FALSE,
    created_at  {{time}} NOT NULL,
    updated_at  {{time}} NOT NULL
);
CREATE UNIQUE INDEX pre_receive_environments_name ON pre_receive_environments (lower(name));
INSERT INTO pre_receive_environments (name, image_url, is_default, created_at, updated_at)
    VALUES ('Default', 'githubenterprise://internal', TRUE, CURRENT_TIMESTAMP, CURRENT_TIMESTAMP);

CREATE TABLE pre_receive_hooks (
    id                   {{id}},
    name                 TEXT NOT NULL,
    script               TEXT NOT NULL,
    script_repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    environment_id       BIGINT NOT NULL REFERENCES pre_receive_environments (id),
    enforcement          TEXT NOT NULL,
    allow_downstream     BOOLEAN NOT NULL,
    created_at           {{time}} NOT NULL,
    updated_at           {{time}} NOT NULL
);
CREATE UNIQUE INDEX pre_receive_hooks_name ON pre_receive_hooks (lower(name));
CREATE INDEX pre_receive_hooks_environment ON pre_receive_hooks (environment_id);

CREATE TABLE pre_receive_org_hooks (
    hook_id          BIGINT NOT NULL REFERENCES pre_receive_hooks (id) ON DELETE CASCADE,
    org_id           BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    enforcement      TEXT NOT NULL,
    allow_downstream BOOLEAN NOT NULL,
    PRIMARY KEY (hook_id, org_id)
);
CREATE TABLE pre_receive_repo_hooks (
    hook_id       BIGINT NOT NULL REFERENCES pre_receive_hooks (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    enforcement   TEXT NOT NULL,
    PRIMARY KEY (hook_id, repository_id)
);

-- +goose Down
DROP TABLE pre_receive_repo_hooks;
DROP TABLE pre_receive_org_hooks;
DROP TABLE pre_receive_hooks;
DROP TABLE pre_receive_environments;
