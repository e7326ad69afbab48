-- Organization settings that decide access (PATCH /orgs/{org}): the
-- repository role every member has on the organization's repositories,
-- and whether members who are not owners may create repositories. They
-- live on the account row, which every access check reads already.
-- Profile fields (PATCH /user, PATCH /orgs/{org}) that only the full user
-- and organization objects show live in account_profiles.

-- +goose Up
ALTER TABLE accounts ADD COLUMN base_repo_permission TEXT NOT NULL DEFAULT 'read'; -- none | read | write | admin
ALTER TABLE accounts ADD COLUMN members_can_create_repos BOOLEAN NOT NULL DEFAULT TRUE;
CREATE TABLE account_profiles (
    account_id       BIGINT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    company          TEXT NOT NULL DEFAULT '',
    blog             TEXT NOT NULL DEFAULT '',
    location         TEXT NOT NULL DEFAULT '',
    bio              TEXT NOT NULL DEFAULT '',
    twitter_username TEXT NOT NULL DEFAULT '',
    hireable         BOOLEAN,
    billing_email    TEXT NOT NULL DEFAULT ''
);

-- +goose Down
DROP TABLE account_profiles;
ALTER TABLE accounts DROP COLUMN members_can_create_repos;
ALTER TABLE accounts DROP COLUMN base_repo_permission;
