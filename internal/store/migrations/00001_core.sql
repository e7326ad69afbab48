-- Accounts, organizations, enterprises, OAuth applications, repositories
-- and credentials: the platform under the spec's API.

-- +goose Up
-- Users, organizations and bots share one login namespace, as on the platform.
CREATE TABLE accounts (
    id            {{id}},
    type          TEXT NOT NULL,               -- User | Organization | Bot
    login         TEXT NOT NULL,
    name          TEXT NOT NULL DEFAULT '',
    email         TEXT NOT NULL DEFAULT '',
    description   TEXT NOT NULL DEFAULT '',
    password_hash TEXT NOT NULL DEFAULT '',
    totp_secret   TEXT NOT NULL DEFAULT '',
    totp_last_step BIGINT NOT NULL DEFAULT 0,  -- last accepted TOTP step, refuses replays
    site_admin    BOOLEAN NOT NULL DEFAULT FALSE,
    saml_enforced BOOLEAN NOT NULL DEFAULT FALSE,
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX accounts_login ON accounts (lower(login));

CREATE TABLE org_members (
    org_id  BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    role    TEXT NOT NULL,                     -- owner | member
    created_at {{time}} NOT NULL,
    PRIMARY KEY (org_id, user_id)
);
CREATE INDEX org_members_user ON org_members (user_id);

CREATE TABLE enterprises (
    id         {{id}},
    slug       TEXT NOT NULL,
    name       TEXT NOT NULL,
    created_at {{time}} NOT NULL,
    updated_at {{time}} NOT NULL
);
CREATE UNIQUE INDEX enterprises_slug ON enterprises (lower(slug));

CREATE TABLE enterprise_owners (
    enterprise_id BIGINT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    user_id       BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    PRIMARY KEY (enterprise_id, user_id)
);

CREATE TABLE enterprise_orgs (
    enterprise_id BIGINT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    org_id        BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    PRIMARY KEY (enterprise_id, org_id)
);
CREATE UNIQUE INDEX enterprise_orgs_org ON enterprise_orgs (org_id);

CREATE TABLE oauth_apps (
    id            {{id}},
    owner_id      BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    url           TEXT NOT NULL DEFAULT '',
    client_id     TEXT NOT NULL,
    client_secret_hash TEXT NOT NULL,          -- SHA-256 hex of the secret
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX oauth_apps_client_id ON oauth_apps (client_id);

CREATE TABLE repositories (
    id                {{id}},
    owner_id          BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name              TEXT NOT NULL,
    description       TEXT NOT NULL DEFAULT '',
    private           BOOLEAN NOT NULL DEFAULT FALSE,
    default_branch    TEXT NOT NULL DEFAULT 'main',
    advanced_security BOOLEAN NOT NULL DEFAULT FALSE,
    fork_of_id        BIGINT REFERENCES repositories (id) ON DELETE SET NULL,
    migration_locked  BOOLEAN NOT NULL DEFAULT FALSE,
    created_at        {{time}} NOT NULL,
    updated_at        {{time}} NOT NULL,
    pushed_at         {{time}}
);
CREATE UNIQUE INDEX repositories_owner_name ON repositories (owner_id, lower(name));
CREATE INDEX repositories_fork_of ON repositories (fork_of_id);

-- Relations between accounts and repositories that feeds and counts read.
CREATE TABLE follows (
    follower_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    followee_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at  {{time}} NOT NULL,
    PRIMARY KEY (follower_id, followee_id)
);
CREATE INDEX follows_followee ON follows (followee_id);

CREATE TABLE stars (
    user_id       BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    created_at    {{time}} NOT NULL,
    PRIMARY KEY (user_id, repository_id)
);
CREATE INDEX stars_repository ON stars (repository_id);

-- Watching (the subscription API); ignored = true mutes the repository.
CREATE TABLE subscriptions (
    user_id       BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    ignored       BOOLEAN NOT NULL DEFAULT FALSE,
    created_at    {{time}} NOT NULL,
    PRIMARY KEY (user_id, repository_id)
);
CREATE INDEX subscriptions_repository ON subscriptions (repository_id);

-- Every token kind lives here, stored only as its SHA-256 hash.
CREATE TABLE tokens (
    id                {{id}},
    kind              TEXT NOT NULL,           -- classic | oauth | fine_grained | installation | app_user
    token_hash        TEXT NOT NULL,
    last_eight        TEXT NOT NULL,
    user_id           BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    scopes            TEXT NOT NULL DEFAULT '',   -- space separated classic scopes
    permissions       TEXT NOT NULL DEFAULT '{}', -- JSON object name -> read|write
    resource_owner_id BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    all_repositories  BOOLEAN NOT NULL DEFAULT FALSE,
    repository_ids    TEXT NOT NULL DEFAULT '[]', -- JSON array of repository ids
    app_id            BIGINT REFERENCES oauth_apps (id) ON DELETE CASCADE,
    note              TEXT NOT NULL DEFAULT '',
    note_url          TEXT NOT NULL DEFAULT '',
    fingerprint       TEXT NOT NULL DEFAULT '',
    expires_at        {{time}},
    created_at        {{time}} NOT NULL,
    updated_at        {{time}} NOT NULL
);
CREATE UNIQUE INDEX tokens_hash ON tokens (token_hash);
CREATE INDEX tokens_user ON tokens (user_id, kind);

-- +goose Down
DROP TABLE tokens;
DROP TABLE subscriptions;
DROP TABLE stars;
DROP TABLE follows;
DROP TABLE repositories;
DROP TABLE oauth_apps;
DROP TABLE enterprise_orgs;
DROP TABLE enterprise_owners;
DROP TABLE enterprises;
DROP TABLE org_members;
DROP TABLE accounts;
