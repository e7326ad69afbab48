-- Actions reusable workflows (internal/actions): a job of a called
-- workflow keeps that workflow's content (as resolved when the run was
-- made); '' for a job of the run's own workflow file.

-- +goose Up
ALTER TABLE actions_jobs ADD COLUMN workflow_file TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE actions_jobs DROP COLUMN workflow_file;
