-- The web application flow and the device flow (issue 23): an OAuth
-- application or an app gets a callback URL that redirect_uri is checked
-- against and a switch for the device flow; authorization codes and
-- device codes live until exchanged (kept only as hashes, with the
-- grant they carry), and an app's user access token has a refresh token
-- (hash) that dies with the token it belongs to.

-- +goose Up
ALTER TABLE oauth_apps ADD COLUMN callback_url TEXT NOT NULL DEFAULT '';
ALTER TABLE oauth_apps ADD COLUMN device_flow BOOLEAN NOT NULL DEFAULT TRUE;
ALTER TABLE apps ADD COLUMN callback_url TEXT NOT NULL DEFAULT '';
ALTER TABLE apps ADD COLUMN device_flow BOOLEAN NOT NULL DEFAULT TRUE;

-- One row per code handed out at GET /login/oauth/authorize's approval;
-- exactly one of oauth_app_id and app_id is set.
CREATE TABLE oauth_codes (
    id                    {{id}},
    code_hash             TEXT NOT NULL,              -- SHA-256 hex of the code
    oauth_app_id          BIGINT REFERENCES oauth_apps (id) ON DELETE CASCADE,
    app_id                BIGINT REFERENCES apps (id) ON DELETE CASCADE,
    user_id               BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    scopes                TEXT NOT NULL DEFAULT '',
    redirect_uri          TEXT NOT NULL DEFAULT '',   -- as the authorize request gave it ('' for none)
    code_challenge        TEXT NOT NULL DEFAULT '',
    code_challenge_method TEXT NOT NULL DEFAULT '',
    used_at               {{time}},
    expires_at            {{time}} NOT NULL,
    created_at            {{time}} NOT NULL
);
CREATE UNIQUE INDEX oauth_codes_hash ON oauth_codes (code_hash);
CREATE INDEX oauth_codes_expires ON oauth_codes (expires_at);

-- One row per POST /login/device/code: pending until the user approves
-- or denies it at /login/device, then used by the poll that gets the token.
CREATE TABLE oauth_device_codes (
    id               {{id}},
    device_code_hash TEXT NOT NULL,                   -- SHA-256 hex of the device code
    user_code        TEXT NOT NULL,                   -- XXXX-XXXX, what the user types
    oauth_app_id     BIGINT REFERENCES oauth_apps (id) ON DELETE CASCADE,
    app_id           BIGINT REFERENCES apps (id) ON DELETE CASCADE,
    scopes           TEXT NOT NULL DEFAULT '',
    state            TEXT NOT NULL DEFAULT 'pending', -- pending | approved | denied | used
    user_id          BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    interval_seconds BIGINT NOT NULL,
    last_poll_at     {{time}},
    expires_at       {{time}} NOT NULL,
    created_at       {{time}} NOT NULL
);
CREATE UNIQUE INDEX oauth_device_codes_hash ON oauth_device_codes (device_code_hash);
CREATE UNIQUE INDEX oauth_device_codes_user_code ON oauth_device_codes (user_code);
CREATE INDEX oauth_device_codes_expires ON oauth_device_codes (expires_at);

-- The refresh token of an app's user access token (a tokens row of kind
-- app_user): refreshing deletes both and makes a new pair.
CREATE TABLE app_refresh_tokens (
    id         {{id}},
    token_hash TEXT NOT NULL,                         -- SHA-256 hex of the refresh token
    app_id     BIGINT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    user_id    BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    access_token_id BIGINT NOT NULL REFERENCES tokens (id) ON DELETE CASCADE,
    expires_at {{time}} NOT NULL,
    created_at {{time}} NOT NULL
);
CREATE UNIQUE INDEX app_refresh_tokens_hash ON app_refresh_tokens (token_hash);
CREATE INDEX app_refresh_tokens_access ON app_refresh_tokens (access_token_id);

-- +goose Down
DROP TABLE app_refresh_tokens;
DROP TABLE oauth_device_codes;
DROP TABLE oauth_codes;
ALTER TABLE apps DROP COLUMN device_flow;
ALTER TABLE apps DROP COLUMN callback_url;
ALTER TABLE oauth_apps DROP COLUMN device_flow;
ALTER TABLE oauth_apps DROP COLUMN callback_url;
