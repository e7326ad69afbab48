-- The leased rows of git_maintenance, few at any time (one per git gc
-- running, or waiting out a lease after a failure): a server that is the
-- only one on its SQLite database ends at start the leases a killed
-- process left (githost.Maintainer.ReleaseLeases), reading this index
-- instead of a row per repository that was ever pushed to.

-- +goose Up
CREATE INDEX git_maintenance_leased ON git_maintenance (lease_until) WHERE lease_until IS NOT NULL;

-- +goose Down
DROP INDEX git_maintenance_leased;
