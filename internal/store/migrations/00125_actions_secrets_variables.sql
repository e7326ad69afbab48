-- Actions and Dependabot secrets and Actions variables (issue 51): the
-- values of a repository, an organization or a repository's environment,
-- one table for the three kinds because they share their shape and rules
-- (names unique per kind and place, in upper case; an organization's value
-- is visible to all, private or selected repositories).
--
-- A secret's value is stored as the client sealed it (libsodium's sealed
-- box, base64) with the public key of actions_keys that key_id names; only
-- the key pair's private key opens it, and that key is itself sealed at
-- rest with the server's secret box. scope_id is the repository's, the
-- organization's or the environment's id; the three nullable foreign keys
-- repeat it so that deleting the place deletes its values.

-- +goose Up
CREATE TABLE actions_keys (
    scope           TEXT NOT NULL,   -- repo | org
    scope_id        BIGINT NOT NULL,
    repository_id   BIGINT REFERENCES repositories (id) ON DELETE CASCADE,
    organization_id BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    key_id          TEXT NOT NULL,
    public_key      TEXT NOT NULL,   -- base64 of the Curve25519 public key
    private_key     TEXT NOT NULL,   -- secretbox-sealed base64 of the private key
    created_at      {{time}} NOT NULL,
    PRIMARY KEY (scope, scope_id)
);

CREATE TABLE actions_values (
    id              {{id}},
    kind            TEXT NOT NULL,   -- secret | dependabot_secret | variable
    scope           TEXT NOT NULL,   -- repo | org | env
    scope_id        BIGINT NOT NULL,
    repository_id   BIGINT REFERENCES repositories (id) ON DELETE CASCADE,
    organization_id BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    environment_id  BIGINT REFERENCES environments (id) ON DELETE CASCADE,
    name            TEXT NOT NULL,   -- upper case
    value           TEXT NOT NULL,   -- a variable's value, a secret's sealed box (base64)
    key_id          TEXT NOT NULL DEFAULT '',
    visibility      TEXT NOT NULL DEFAULT '', -- organizations: all | private | selected
    created_at      {{time}} NOT NULL,
    updated_at      {{time}} NOT NULL
);
CREATE UNIQUE INDEX actions_values_name ON actions_values (kind, scope, scope_id, name);

CREATE TABLE actions_value_repositories (
    value_id      BIGINT NOT NULL REFERENCES actions_values (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (value_id, repository_id)
);
CREATE INDEX actions_value_repositories_repository ON actions_value_repositories (repository_id);

-- +goose Down
DROP TABLE actions_value_repositories;
DROP TABLE actions_values;
DROP TABLE actions_keys;
