-- Apps as the platform has them (issue 21): an app is registered by an
-- administrator, owned by a user or an organization, acts through its
-- bot account ({slug}[bot], type Bot), authenticates with JWTs signed by
-- one of its private keys (app_keys keeps the public halves), and is
-- installed on accounts (app_installations). An installation's tokens
-- are rows of kind 'installation' in tokens that name it: uninstalling
-- deletes them, suspending stops them.

-- +goose Up
CREATE TABLE apps (
    id                   {{id}},
    slug                 TEXT NOT NULL,
    name                 TEXT NOT NULL,
    description          TEXT NOT NULL DEFAULT '',
    owner_id             BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    bot_id               BIGINT NOT NULL REFERENCES accounts (id),
    client_id            TEXT NOT NULL,
    client_secret_hash   TEXT NOT NULL,             -- SHA-256 hex of the secret
    permissions          TEXT NOT NULL DEFAULT '{}', -- JSON object name -> read|write (auth.Grant)
    events               TEXT NOT NULL DEFAULT '[]', -- JSON array of event names
    webhook_url          TEXT NOT NULL DEFAULT '',
    webhook_secret       TEXT NOT NULL DEFAULT '',  -- sealed (secretbox), '' for none
    webhook_content_type TEXT NOT NULL DEFAULT 'json',
    webhook_active       BOOLEAN NOT NULL DEFAULT TRUE,
    public               BOOLEAN NOT NULL DEFAULT FALSE,
    created_at           {{time}} NOT NULL,
    updated_at           {{time}} NOT NULL
);
CREATE UNIQUE INDEX apps_slug ON apps (slug);
CREATE UNIQUE INDEX apps_client_id ON apps (client_id);
CREATE UNIQUE INDEX apps_bot ON apps (bot_id);
CREATE INDEX apps_owner ON apps (owner_id);

CREATE TABLE app_keys (
    id         {{id}},
    app_id     BIGINT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    public_key TEXT NOT NULL,                       -- PEM, PKIX
    created_at {{time}} NOT NULL
);
CREATE INDEX app_keys_app ON app_keys (app_id);

CREATE TABLE app_installations (
    id                   {{id}},
    app_id               BIGINT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    account_id           BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    repository_selection TEXT NOT NULL,              -- all | selected
    repository_ids       TEXT NOT NULL DEFAULT '[]', -- JSON array, for selected
    suspended_at         {{time}},
    suspended_by_id      BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    created_at           {{time}} NOT NULL,
    updated_at           {{time}} NOT NULL
);
CREATE UNIQUE INDEX app_installations_app_account ON app_installations (app_id, account_id);
CREATE INDEX app_installations_account ON app_installations (account_id);

-- The installation an installation token was minted for (NULL for the
-- tokens `forgeapi token create --installation` mints without an app).
ALTER TABLE tokens ADD COLUMN installation_id BIGINT REFERENCES app_installations (id) ON DELETE CASCADE;
CREATE INDEX tokens_installation ON tokens (installation_id);

-- +goose Down
DROP INDEX tokens_installation;
ALTER TABLE tokens DROP COLUMN installation_id;
DROP TABLE app_installations;
DROP TABLE app_keys;
DROP TABLE apps;
