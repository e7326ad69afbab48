-- Whether an organization member shows the membership publicly (PUT and
-- DELETE /orgs/{org}/public_members/{username}): public members are
-- listed to everyone, concealed ones only to the organization's members.

-- +goose Up
ALTER TABLE org_members ADD COLUMN public BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE org_members DROP COLUMN public;
