-- Artifact metadata: artifacts of an organization, their deployment
-- records and their storage records (spec endpoints 15-19).

-- +goose Up
-- An artifact is identified by its organization, repository and digest;
-- it has one name and version, those of the request that created it.
-- repo_key is repository_id, or 0 for an artifact that names no
-- repository, so that the unique index treats "no repository" as one key
-- (NULLs would all be distinct).
CREATE TABLE artifacts (
    id            {{id}},
    org_id        BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    repository_id BIGINT REFERENCES repositories (id) ON DELETE CASCADE,
    repo_key      BIGINT NOT NULL,
    digest        TEXT NOT NULL,
    name          TEXT NOT NULL,
    version       TEXT NOT NULL DEFAULT '',
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL,
    CHECK (repo_key = COALESCE(repository_id, 0))
);
CREATE UNIQUE INDEX artifacts_identity ON artifacts (org_id, repo_key, digest);
CREATE INDEX artifacts_digest ON artifacts (org_id, digest);
CREATE INDEX artifacts_repository ON artifacts (repository_id);

-- A deployment record is identified by its organization, logical
-- environment, physical environment, cluster and deployment name (absent
-- physical environment and cluster are ''); a repeated combination
-- updates the record.
CREATE TABLE deployment_records (
    id                   {{id}},
    org_id               BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    artifact_id          BIGINT NOT NULL REFERENCES artifacts (id) ON DELETE CASCADE,
    logical_environment  TEXT NOT NULL,
    physical_environment TEXT NOT NULL DEFAULT '',
    cluster              TEXT NOT NULL DEFAULT '',
    deployment_name      TEXT NOT NULL,
    status               TEXT NOT NULL,            -- deployed | decommissioned
    tags                 TEXT NOT NULL DEFAULT '{}', -- JSON object string -> string
    runtime_risks        TEXT NOT NULL DEFAULT '[]', -- JSON array of strings
    attestation_id       BIGINT,
    created_at           {{time}} NOT NULL,
    updated_at           {{time}} NOT NULL
);
CREATE UNIQUE INDEX deployment_records_identity
    ON deployment_records (org_id, logical_environment, physical_environment, cluster, deployment_name);
CREATE INDEX deployment_records_artifact ON deployment_records (artifact_id);

-- A storage record says where an artifact is kept; one per artifact,
-- registry and registry repository (a repeat updates it).
CREATE TABLE storage_records (
    id           {{id}},
    artifact_id  BIGINT NOT NULL REFERENCES artifacts (id) ON DELETE CASCADE,
    name         TEXT NOT NULL,
    version      TEXT NOT NULL DEFAULT '',
    registry_url TEXT NOT NULL,
    repository   TEXT NOT NULL DEFAULT '',     -- the repository within the registry
    artifact_url TEXT NOT NULL DEFAULT '',
    path         TEXT NOT NULL DEFAULT '',
    status       TEXT NOT NULL,                -- active | eol | deleted
    created_at   {{time}} NOT NULL,
    updated_at   {{time}} NOT NULL
);
CREATE UNIQUE INDEX storage_records_identity ON storage_records (artifact_id, registry_url, repository);

-- +goose Down
DROP TABLE storage_records;
DROP TABLE deployment_records;
DROP TABLE artifacts;
