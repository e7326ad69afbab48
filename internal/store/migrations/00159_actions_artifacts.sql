-- Actions artifacts and the runtime service (internal/actions): the
-- runtime tokens a job's steps present to the results service
-- (ACTIONS_RUNTIME_TOKEN, stored hashed, deleted when the job ends), and
-- the artifacts jobs upload through it: created, uploaded to a signed
-- address (upload_token, hashed), finalized; their zip in blob storage.
-- An artifact past expires_at is pruned (expired, its zip deleted) by a
-- leased pruner.

-- +goose Up
CREATE TABLE actions_runtime_tokens (
    token_hash    TEXT PRIMARY KEY,
    job_id        BIGINT NOT NULL REFERENCES actions_jobs (id) ON DELETE CASCADE,
    run_id        BIGINT NOT NULL REFERENCES actions_runs (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    expires_at    {{time}} NOT NULL
);
CREATE INDEX actions_runtime_tokens_job ON actions_runtime_tokens (job_id);

CREATE TABLE actions_artifacts (
    id                {{id}},
    repository_id     BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    run_id            BIGINT NOT NULL REFERENCES actions_runs (id) ON DELETE CASCADE,
    job_id            BIGINT,
    name              TEXT NOT NULL,
    mime_type         TEXT NOT NULL DEFAULT 'application/zip',
    size_in_bytes     BIGINT NOT NULL DEFAULT 0,
    digest            TEXT,
    finalized         BOOLEAN NOT NULL DEFAULT FALSE,
    expired           BOOLEAN NOT NULL DEFAULT FALSE,
    upload_token_hash TEXT NOT NULL DEFAULT '',
    created_at        {{time}} NOT NULL,
    updated_at        {{time}} NOT NULL,
    expires_at        {{time}} NOT NULL,
    lease_owner       TEXT NOT NULL DEFAULT '',
    lease_until       {{time}}
);
CREATE INDEX actions_artifacts_run ON actions_artifacts (run_id, name);
CREATE INDEX actions_artifacts_repository ON actions_artifacts (repository_id, id);
CREATE INDEX actions_artifacts_expiry ON actions_artifacts (expired, expires_at);

-- +goose Down
DROP TABLE actions_artifacts;
DROP TABLE actions_runtime_tokens;
