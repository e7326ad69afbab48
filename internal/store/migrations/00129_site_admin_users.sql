-- Site administration of users (internal/siteadmin): a suspended user
-- (suspended_at set) authenticates with nothing, neither tokens nor
-- password nor SSH keys, until unsuspended; the reason is kept for the
-- administrators. A user's impersonation token (POST
-- /admin/users/{username}/authorizations) is an OAuth token that the
-- table names, one per user, gone with its token.

-- +goose Up
ALTER TABLE accounts ADD COLUMN suspended_at {{time}};
ALTER TABLE accounts ADD COLUMN suspension_reason TEXT NOT NULL DEFAULT '';
CREATE TABLE impersonation_tokens (
    user_id  BIGINT NOT NULL PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    token_id BIGINT NOT NULL REFERENCES tokens (id) ON DELETE CASCADE
);
CREATE INDEX impersonation_tokens_token ON impersonation_tokens (token_id);

-- +goose Down
DROP TABLE impersonation_tokens;
ALTER TABLE accounts DROP COLUMN suspension_reason;
ALTER TABLE accounts DROP COLUMN suspended_at;
