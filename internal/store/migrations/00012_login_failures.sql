-- Failed password and one-time-password attempts, counted per account
-- and client address (address '' holds the account's count across all
-- addresses). A row counts the failures of one fixed window that began
-- at the first failure and ends at reset_at; past the limit, password
-- authentication of the account is refused until then. A failed attempt
-- upserts both rows in one statement and deletes the account's expired
-- rows; a success deletes its own pair's row only when one exists.

-- +goose Up
CREATE TABLE login_failures (
    account_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    address    TEXT NOT NULL,     -- the client address, or '' for the account as a whole
    failures   INTEGER NOT NULL,
    reset_at   {{time}} NOT NULL, -- when the window (and any block) ends
    PRIMARY KEY (account_id, address)
);

-- +goose Down
DROP TABLE login_failures;
