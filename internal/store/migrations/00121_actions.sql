-- Actions (internal/actions): the workflows found in pushed commits, their
-- runs (one row per run, its latest attempt's state beside the attempts'
-- own rows), and the jobs of every attempt, which are also the runner's
-- work table (claimed with a lease; a job whose lease ran out while it was
-- in progress is failed, never run twice).

-- +goose Up
CREATE TABLE actions_workflows (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    path          TEXT NOT NULL,
    name          TEXT NOT NULL,
    state         TEXT NOT NULL DEFAULT 'active',
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL,
    UNIQUE (repository_id, path)
);

CREATE TABLE actions_runs (
    id                  {{id}},
    repository_id       BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    workflow_id         BIGINT NOT NULL REFERENCES actions_workflows (id) ON DELETE CASCADE,
    run_number          BIGINT NOT NULL,
    run_attempt         INTEGER NOT NULL DEFAULT 1,
    name                TEXT NOT NULL,
    display_title       TEXT NOT NULL,
    event               TEXT NOT NULL,
    status              TEXT NOT NULL,
    conclusion          TEXT,
    head_sha            TEXT NOT NULL,
    head_branch         TEXT,
    actor_id            BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    triggering_actor_id BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    workflow_file       TEXT NOT NULL,
    event_payload       TEXT NOT NULL DEFAULT '{}',
    inputs              TEXT NOT NULL DEFAULT '{}',
    head_commit         TEXT NOT NULL DEFAULT 'null',
    error               TEXT NOT NULL DEFAULT '',
    run_started_at      {{time}} NOT NULL,
    created_at          {{time}} NOT NULL,
    updated_at          {{time}} NOT NULL,
    UNIQUE (workflow_id, run_number)
);
CREATE INDEX actions_runs_repository ON actions_runs (repository_id, id);

CREATE TABLE actions_run_attempts (
    run_id              BIGINT NOT NULL REFERENCES actions_runs (id) ON DELETE CASCADE,
    attempt             INTEGER NOT NULL,
    status              TEXT NOT NULL,
    conclusion          TEXT,
    triggering_actor_id BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    run_started_at      {{time}} NOT NULL,
    updated_at          {{time}} NOT NULL,
    PRIMARY KEY (run_id, attempt)
);

CREATE TABLE actions_jobs (
    id               {{id}},
    run_id           BIGINT NOT NULL REFERENCES actions_runs (id) ON DELETE CASCADE,
    repository_id    BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    run_attempt      INTEGER NOT NULL,
    job_key          TEXT NOT NULL,
    name             TEXT NOT NULL,
    matrix           TEXT NOT NULL DEFAULT 'null',
    needs            TEXT NOT NULL DEFAULT '[]',
    labels           TEXT NOT NULL DEFAULT '[]',
    steps            TEXT NOT NULL DEFAULT '[]',
    outputs          TEXT NOT NULL DEFAULT '{}',
    status           TEXT NOT NULL,
    conclusion       TEXT,
    started_at       {{time}},
    completed_at     {{time}},
    created_at       {{time}} NOT NULL,
    runner_name      TEXT,
    has_log          BOOLEAN NOT NULL DEFAULT FALSE,
    cancel_requested BOOLEAN NOT NULL DEFAULT FALSE,
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_until      {{time}}
);
CREATE INDEX actions_jobs_run ON actions_jobs (run_id, run_attempt, id);
CREATE INDEX actions_jobs_status ON actions_jobs (status, id);

-- +goose Down
DROP TABLE actions_jobs;
DROP TABLE actions_run_attempts;
DROP TABLE actions_runs;
DROP TABLE actions_workflows;
