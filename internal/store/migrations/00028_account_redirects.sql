-- Old logins of renamed accounts (PATCH /admin/organizations/{org}): a
-- request naming OLD/repo redirects to the repository under the account's
-- current login while no account has taken OLD (repos.Renamed).

-- +goose Up
CREATE TABLE account_redirects (
    login_lower TEXT PRIMARY KEY,
    account_id  BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at  {{time}} NOT NULL
);
CREATE INDEX account_redirects_account ON account_redirects (account_id);

-- +goose Down
DROP TABLE account_redirects;
