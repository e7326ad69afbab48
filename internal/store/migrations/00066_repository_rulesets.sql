-- Repository rulesets (/repos/{owner}/{repo}/rulesets) share the
-- organization rulesets' table and engine (internal/rulesets): their
-- repository_id names the repository they belong to (org_id its owner,
-- a user or an organization), NULL for an organization's rulesets. Names
-- are unique per organization and per repository.

-- +goose Up
ALTER TABLE org_rulesets ADD COLUMN repository_id BIGINT REFERENCES repositories (id) ON DELETE CASCADE;
DROP INDEX org_rulesets_name;
CREATE UNIQUE INDEX org_rulesets_name ON org_rulesets (org_id, COALESCE(repository_id, 0), name);
CREATE INDEX org_rulesets_repository ON org_rulesets (repository_id);

-- +goose Down
DROP INDEX org_rulesets_repository;
DROP INDEX org_rulesets_name;
DELETE FROM org_rulesets WHERE repository_id IS NOT NULL;
ALTER TABLE org_rulesets DROP COLUMN repository_id;
CREATE UNIQUE INDEX org_rulesets_name ON org_rulesets (org_id, name);
