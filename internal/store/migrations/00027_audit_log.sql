-- The organization audit log (GET /orgs/{org}/audit-log): one row per
-- administrative change forgeapi makes in an organization, written in the
-- transaction of the change.

-- +goose Up
CREATE TABLE audit_log (
    id          {{id}},
    org_id      BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    document_id TEXT NOT NULL,
    action      TEXT NOT NULL,      -- the platform's name: repo.create, hook.create, ...
    actor_id    BIGINT,             -- NULL for an unknown actor; kept when the account goes
    actor_login TEXT NOT NULL,
    repo        TEXT NOT NULL,      -- owner/name, or ''
    user_login  TEXT NOT NULL,      -- the user affected, or ''
    git         BOOLEAN NOT NULL,   -- a git event (include=git), else web
    data        TEXT NOT NULL,      -- JSON object of further fields
    created_ms  BIGINT NOT NULL     -- Unix milliseconds
);
CREATE INDEX audit_log_org ON audit_log (org_id, id);

-- +goose Down
DROP TABLE audit_log;
