-- The email addresses of users (GET, POST, DELETE /user/emails): one
-- primary address per user; an address belongs to one account. forgeapi
-- sends no mail, so every address counts as verified. The addresses users
-- were created with become their primary ones (an address several users
-- were created with, that of the oldest).

-- +goose Up
CREATE TABLE user_emails (
    user_id    BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    email      TEXT NOT NULL,
    is_primary BOOLEAN NOT NULL DEFAULT FALSE,
    visibility TEXT NOT NULL DEFAULT 'private',  -- public | private, of the primary address
    created_at {{time}} NOT NULL
);
CREATE UNIQUE INDEX user_emails_email ON user_emails (lower(email));
CREATE INDEX user_emails_user ON user_emails (user_id);
INSERT INTO user_emails (user_id, email, is_primary, visibility, created_at)
    SELECT id, email, TRUE, 'public', created_at FROM accounts u WHERE type = 'User' AND email <> ''
    AND id = (SELECT min(id) FROM accounts o WHERE o.type = 'User' AND lower(o.email) = lower(u.email));

-- +goose Down
DROP TABLE user_emails;
