-- Environment gates (internal/deployments, actions.Gates): an Actions job
-- that names a protected environment (a wait timer, required reviewers,
-- custom deployment protection rules) is held before a runner claims it.
-- Its gate is made the first time a runner would claim it, with the
-- deployment of the job (made then, as on the platform), and opens once
-- the timer ran out (wait_until), a required reviewer approved (review)
-- and every enabled app approved (environment_gate_rules); a rejection
-- closes it and fails the job.

-- +goose Up
CREATE TABLE environment_gates (
    id             {{id}},
    repository_id  BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    run_id         BIGINT NOT NULL REFERENCES actions_runs (id) ON DELETE CASCADE,
    job_id         BIGINT NOT NULL REFERENCES actions_jobs (id) ON DELETE CASCADE,
    environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    deployment_id  BIGINT REFERENCES deployments (id) ON DELETE SET NULL,
    wait_timer     INTEGER NOT NULL DEFAULT 0, -- minutes, as the environment had it
    wait_until     {{time}},                   -- NULL: no timer
    review         TEXT NOT NULL DEFAULT '',   -- '' (no reviewers) | pending | approved | rejected
    state          TEXT NOT NULL DEFAULT 'waiting', -- waiting | approved | rejected
    created_at     {{time}} NOT NULL,
    updated_at     {{time}} NOT NULL
);
CREATE UNIQUE INDEX environment_gates_job ON environment_gates (job_id);
CREATE INDEX environment_gates_run ON environment_gates (run_id, environment_id);

CREATE TABLE environment_gate_rules (
    gate_id BIGINT NOT NULL REFERENCES environment_gates (id) ON DELETE CASCADE,
    app_id  BIGINT NOT NULL,
    state   TEXT NOT NULL DEFAULT 'pending', -- pending | approved | rejected
    comment TEXT NOT NULL DEFAULT '',
    PRIMARY KEY (gate_id, app_id)
);

-- +goose Down
DROP TABLE environment_gate_rules;
DROP TABLE environment_gates;
