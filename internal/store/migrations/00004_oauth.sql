-- OAuth grants and authorizations. An authorization is a row of kind
-- 'oauth' in tokens (app_id NULL for a personal authorization); a grant
-- is one row per user and OAuth application that holds tokens for the
-- user, so that it keeps a stable id while its tokens come and go.

-- +goose Up
CREATE TABLE oauth_grants (
    id         {{id}},
    user_id    BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    app_id     BIGINT NOT NULL REFERENCES oauth_apps (id) ON DELETE CASCADE,
    created_at {{time}} NOT NULL,
    updated_at {{time}} NOT NULL
);
CREATE UNIQUE INDEX oauth_grants_user_app ON oauth_grants (user_id, app_id);

-- A user's tokens of one application (grants, scope unions, cascades).
CREATE INDEX tokens_oauth_user_app ON tokens (user_id, app_id) WHERE kind = 'oauth';
-- The fingerprint tells apart several tokens of one application for one user.
CREATE UNIQUE INDEX tokens_oauth_fingerprint ON tokens (user_id, app_id, fingerprint)
    WHERE kind = 'oauth' AND app_id IS NOT NULL AND fingerprint <> '';
-- A personal authorization is known by its note, unique per user.
CREATE UNIQUE INDEX tokens_oauth_personal_note ON tokens (user_id, note)
    WHERE kind = 'oauth' AND app_id IS NULL;

-- +goose Down
DROP INDEX tokens_oauth_personal_note;
DROP INDEX tokens_oauth_fingerprint;
DROP INDEX tokens_oauth_user_app;
DROP TABLE oauth_grants;
