-- Scheduled git maintenance: a row per repository that received pushes,
-- counting the pushes since maintenance (git gc) last ran on it. The
-- transaction that records a push increments pushes_since; the
-- maintenance worker claims a row with a lease once enough pushes
-- accumulated (or the oldest counted push is too old), runs git gc and
-- subtracts the pushes it saw. Kept apart from repositories, whose writes
-- invalidate the in-memory caches.

-- +goose Up
CREATE TABLE git_maintenance (
    repository_id BIGINT PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    pushes_since  BIGINT NOT NULL DEFAULT 0,
    last_run_at   {{time}} NOT NULL,  -- when maintenance last ran, or when the first push was counted
    lease_owner   TEXT NOT NULL DEFAULT '',
    lease_until   {{time}}            -- NULL: unclaimed
);

-- +goose Down
DROP TABLE git_maintenance;
