-- Organizations whose deletion was requested (DELETE /orgs/{org}, 202):
-- the Deleter claims each row with a lease, deletes the organization's
-- repositories and then the organization, whose row takes this one with
-- it.

-- +goose Up
CREATE TABLE org_deletions (
    org_id       BIGINT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    requested_at {{time}} NOT NULL,
    lease_owner  TEXT NOT NULL DEFAULT '',
    lease_until  {{time}}
);

-- +goose Down
DROP TABLE org_deletions;
