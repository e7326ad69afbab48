-- Sessions of the web console (internal/console): a browser's session
-- cookie holds a random id, the row only its SHA-256 hash, so that a
-- restart keeps sessions and sign-out ends them. A session is "otp" while
-- it waits for the one-time password of an account with two-factor
-- authentication (it signs nobody in) and "active" once signed in. The
-- row's csrf_token is the token every form of the session carries.

-- +goose Up
CREATE TABLE console_sessions (
    id_hash     TEXT PRIMARY KEY,
    user_id     BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    state       TEXT NOT NULL,               -- otp | active
    csrf_token  TEXT NOT NULL,
    created_at  {{time}} NOT NULL,
    expires_at  {{time}} NOT NULL
);
CREATE INDEX console_sessions_user ON console_sessions (user_id);
CREATE INDEX console_sessions_expires ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
