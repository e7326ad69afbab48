-- Actions job-level concurrency (internal/actions): the concurrency group
-- of a job (its `concurrency`, evaluated when the job is queued; '' for
-- none). A job is not claimed while an older job of its group in the
-- repository is not completed.

-- +goose Up
ALTER TABLE actions_jobs ADD COLUMN concurrency_group TEXT NOT NULL DEFAULT '';
CREATE INDEX actions_jobs_concurrency ON actions_jobs (repository_id, concurrency_group);

-- +goose Down
DROP INDEX actions_jobs_concurrency;
ALTER TABLE actions_jobs DROP COLUMN concurrency_group;
