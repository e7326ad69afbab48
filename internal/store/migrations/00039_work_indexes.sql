-- Indexes for work that runs at every start or sweep and looks for a few
-- rows among many, so that none of it scans a whole table:
--
-- * The pull request checker's claim (internal/pulls) looks for the due
--   checks. The index on (check_due, lease_until) was not used for the
--   bare boolean condition, so every claim scanned the table (106 ms per
--   claim with 1M pull requests on SQLite). A partial index holds only
--   the due rows, in id order, which is the claim's order.
-- * The start's sealing of TOTP seeds stored in plain text
--   (auth.SealPlainTOTPSecrets) reads the accounts with two-factor only.

-- +goose Up
DROP INDEX pull_requests_check;
CREATE INDEX pull_requests_check_due ON pull_requests (id) WHERE check_due;
CREATE INDEX accounts_totp ON accounts (id) WHERE totp_secret <> '';

-- +goose Down
DROP INDEX accounts_totp;
DROP INDEX pull_requests_check_due;
CREATE INDEX pull_requests_check ON pull_requests (check_due, lease_until);
