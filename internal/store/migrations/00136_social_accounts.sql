-- Users' social accounts: the links of their profile, each with the
-- provider told by its address (package accounts, social.go).

-- +goose Up
CREATE TABLE social_accounts (
    user_id    BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    url        TEXT NOT NULL,
    provider   TEXT NOT NULL,
    created_at {{time}} NOT NULL,
    PRIMARY KEY (user_id, url)
);

-- +goose Down
DROP TABLE social_accounts;
