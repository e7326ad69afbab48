-- The app's webhook (issue 21): one hook row per app, of the new kind
-- 'App' (integration_id set; repo_id and org_id NULL), delivered by the
-- same dispatcher and logged in the same hook_deliveries as repository
-- and organization hooks. The webhook settings part 1 kept on apps move
-- to that row; the events the app subscribes to stay on apps.

-- +goose Up
ALTER TABLE hooks ADD COLUMN integration_id BIGINT REFERENCES apps (id) ON DELETE CASCADE;
CREATE UNIQUE INDEX hooks_integration ON hooks (integration_id);
INSERT INTO hooks (integration_id, name, active, events, url, content_type, insecure_ssl, secret, created_at, updated_at)
    SELECT id, 'web', webhook_active, '[]', webhook_url, webhook_content_type, '0', webhook_secret, created_at, updated_at
    FROM apps;
ALTER TABLE apps DROP COLUMN webhook_url;
ALTER TABLE apps DROP COLUMN webhook_secret;
ALTER TABLE apps DROP COLUMN webhook_content_type;
ALTER TABLE apps DROP COLUMN webhook_active;

-- +goose Down
ALTER TABLE apps ADD COLUMN webhook_url TEXT NOT NULL DEFAULT '';
ALTER TABLE apps ADD COLUMN webhook_secret TEXT NOT NULL DEFAULT '';
ALTER TABLE apps ADD COLUMN webhook_content_type TEXT NOT NULL DEFAULT 'json';
ALTER TABLE apps ADD COLUMN webhook_active BOOLEAN NOT NULL DEFAULT TRUE;
DELETE FROM hooks WHERE integration_id IS NOT NULL;
DROP INDEX hooks_integration;
ALTER TABLE hooks DROP COLUMN integration_id;
