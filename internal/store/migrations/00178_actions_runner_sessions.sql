-- Ephemeral and just-in-time runners (internal/actions/settings): the
-- random id of the runner process that first claimed a job with an
-- ephemeral runner's credential ('' until then); another process's claim
-- is refused, so a just-in-time configuration runs once.

-- +goose Up
ALTER TABLE runners ADD COLUMN session TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE runners DROP COLUMN session;
