-- The environment an Actions job deploys to (its environment: key) and the
-- deployment made for it when it ran; '' and NULL for a job without one.

-- +goose Up
ALTER TABLE actions_jobs ADD COLUMN environment TEXT NOT NULL DEFAULT '';
ALTER TABLE actions_jobs ADD COLUMN deployment_id BIGINT;

-- +goose Down
ALTER TABLE actions_jobs DROP COLUMN deployment_id;
ALTER TABLE actions_jobs DROP COLUMN environment;
