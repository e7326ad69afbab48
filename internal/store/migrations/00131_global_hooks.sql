-- Global webhooks of the self-managed edition (GET/POST /admin/hooks):
-- hooks of the whole installation, with neither repository nor
-- organization, that receive its user and organization events through
-- the same delivery engine as every other hook.

-- +goose Up
ALTER TABLE hooks ADD COLUMN global BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE hooks DROP COLUMN global;
