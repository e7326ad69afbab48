-- Actions concurrency (internal/actions): the concurrency group of a run
-- (the workflow's `concurrency`, evaluated when the run is made; '' for
-- none). A run's jobs are not claimed while an older run of its group in
-- the repository is not completed.

-- +goose Up
ALTER TABLE actions_runs ADD COLUMN concurrency_group TEXT NOT NULL DEFAULT '';
CREATE INDEX actions_runs_concurrency ON actions_runs (repository_id, concurrency_group);

-- +goose Down
DROP INDEX actions_runs_concurrency;
ALTER TABLE actions_runs DROP COLUMN concurrency_group;
