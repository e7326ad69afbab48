-- Git maintenance of the gists' repositories: every change (a commit
-- through the API, a push) counts in changes_since, and the gists
-- Maintainer runs git gc on a gist whose count reached its threshold,
-- claimed with a lease (lease_owner, lease_until) as git_maintenance
-- (00011, 00043) does for repositories.

-- +goose Up
ALTER TABLE gists ADD COLUMN changes_since BIGINT NOT NULL DEFAULT 0;
ALTER TABLE gists ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE gists ADD COLUMN lease_until {{time}};
CREATE INDEX gists_maintenance_due ON gists (id) WHERE changes_since > 0;
CREATE INDEX gists_maintenance_leased ON gists (id) WHERE lease_until IS NOT NULL;

-- +goose Down
DROP INDEX gists_maintenance_leased;
DROP INDEX gists_maintenance_due;
ALTER TABLE gists DROP COLUMN lease_until;
ALTER TABLE gists DROP COLUMN lease_owner;
ALTER TABLE gists DROP COLUMN changes_since;
