-- Actions reusable workflows (internal/actions): a job of a workflow
-- called from a called workflow keeps its chain of caller jobs (JSON:
-- each caller's key and the content of the workflow it is in, outermost
-- first), as resolved when the run was made; '' for the others.

-- +goose Up
ALTER TABLE actions_jobs ADD COLUMN call_chain TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE actions_jobs DROP COLUMN call_chain;
