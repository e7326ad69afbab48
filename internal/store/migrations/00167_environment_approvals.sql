-- The review history of a workflow run's deployments
-- (GET /repos/{owner}/{repo}/actions/runs/{run_id}/approvals): each
-- review a required reviewer made (POST .../pending_deployments), with
-- the environments it named.

-- +goose Up
CREATE TABLE environment_approvals (
    id              {{id}},
    run_id          BIGINT NOT NULL REFERENCES actions_runs (id) ON DELETE CASCADE,
    user_id         BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    state           TEXT NOT NULL,  -- approved | rejected
    comment         TEXT NOT NULL DEFAULT '',
    environment_ids TEXT NOT NULL,  -- JSON array of environment ids
    created_at      {{time}} NOT NULL
);
CREATE INDEX environment_approvals_run ON environment_approvals (run_id, id);

-- +goose Down
DROP TABLE environment_approvals;
