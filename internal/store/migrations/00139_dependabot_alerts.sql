-- Dependabot alerts (internal/dependabot). dependabot_repositories are
-- the repositories with vulnerability alerts on (PUT
-- .../vulnerability-alerts) and their work: enabling and each push of the
-- default branch bump requested in the change's transaction; the leased
-- checker reads the default branch's manifests, matches their
-- dependencies against the advisory database and records the generation
-- it checked; a new version of the advisory database (an import) bumps
-- requested too, once per version (advisory_version). dependabot_alerts are one per advisory, package and
-- manifest; advisory and vulnerability keep the advisory's JSON as the
-- alert shows it.

-- +goose Up
CREATE TABLE dependabot_repositories (
    repository_id BIGINT PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    enabled       BOOLEAN NOT NULL DEFAULT TRUE,
    requested     BIGINT NOT NULL DEFAULT 1,
    checked       BIGINT NOT NULL DEFAULT 0,
    actor_id      BIGINT,
    advisory_version BIGINT NOT NULL DEFAULT 0,
    lease_owner   TEXT NOT NULL DEFAULT '',
    lease_until   {{time}}
);

CREATE TABLE dependabot_alerts (
    id                {{id}},
    repository_id     BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number            BIGINT NOT NULL,
    ghsa_id           TEXT NOT NULL,
    ecosystem         TEXT NOT NULL,
    package_name      TEXT NOT NULL,
    manifest_path     TEXT NOT NULL,
    scope             TEXT,
    severity          TEXT NOT NULL,
    advisory          TEXT NOT NULL,
    vulnerability     TEXT NOT NULL,
    state             TEXT NOT NULL DEFAULT 'open',
    dismissed_by_id   BIGINT,
    dismissed_at      {{time}},
    dismissed_reason  TEXT,
    dismissed_comment TEXT,
    fixed_at          {{time}},
    created_at        {{time}} NOT NULL,
    updated_at        {{time}} NOT NULL
);
CREATE UNIQUE INDEX dependabot_alerts_number ON dependabot_alerts (repository_id, number);
CREATE UNIQUE INDEX dependabot_alerts_identity ON dependabot_alerts (repository_id, ghsa_id, ecosystem, package_name, manifest_path);

-- +goose Down
DROP TABLE dependabot_alerts;
DROP TABLE dependabot_repositories;
