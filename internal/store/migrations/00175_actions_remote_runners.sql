-- Actions jobs taken by registered runners (`forgeapi runner`): the runner
-- (NULL for the built-in runner) and its group as the job shows them, the
-- job's GITHUB_TOKEN (revoked when the job ends, wherever it ran), and
-- whether the runner started the job: a job whose lease ran out before
-- its runner started it is queued again, one started is failed.

-- +goose Up
ALTER TABLE actions_jobs ADD COLUMN runner_id BIGINT;
ALTER TABLE actions_jobs ADD COLUMN runner_group_id BIGINT;
ALTER TABLE actions_jobs ADD COLUMN runner_group_name TEXT;
ALTER TABLE actions_jobs ADD COLUMN token_id BIGINT;
ALTER TABLE actions_jobs ADD COLUMN runner_started BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE actions_jobs DROP COLUMN runner_started;
ALTER TABLE actions_jobs DROP COLUMN token_id;
ALTER TABLE actions_jobs DROP COLUMN runner_group_name;
ALTER TABLE actions_jobs DROP COLUMN runner_group_id;
ALTER TABLE actions_jobs DROP COLUMN runner_id;
