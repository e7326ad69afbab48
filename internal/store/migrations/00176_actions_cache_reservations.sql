-- Actions caches (internal/actions): the blocks a v2 upload staged for a
-- reserved entry (Put Block), kept until Put Block List joins them, and a
-- lease on the entries, so that the cache pruner removes the
-- reservations never committed (v1 and v2) with their staged blobs, and
-- evicts committed entries as the platform does, across servers.

-- +goose Up
CREATE TABLE actions_cache_blocks (
    cache_id BIGINT NOT NULL REFERENCES actions_caches (id) ON DELETE CASCADE,
    block_id TEXT NOT NULL,
    PRIMARY KEY (cache_id, block_id)
);
ALTER TABLE actions_caches ADD COLUMN lease_owner TEXT NOT NULL DEFAULT '';
ALTER TABLE actions_caches ADD COLUMN lease_until {{time}};
CREATE INDEX actions_caches_reserved ON actions_caches (finalized, created_at);

-- +goose Down
DROP INDEX actions_caches_reserved;
ALTER TABLE actions_caches DROP COLUMN lease_until;
ALTER TABLE actions_caches DROP COLUMN lease_owner;
DROP TABLE actions_cache_blocks;
