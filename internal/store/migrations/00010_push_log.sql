-- The push log: a row per accepted push, committed in pre-receive before
-- any reference moves and deleted in the transaction that records the
-- push's events. A row that outlives its push (crash, kill -9, a failed
-- events transaction) is claimed with a lease by the push recovery
-- worker, which records the events of the updates git applied.

-- +goose Up
CREATE TABLE push_log (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    pusher_id     BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    updates       TEXT NOT NULL,  -- JSON array of {ref, old, new}
    refs_before   TEXT NOT NULL,  -- JSON array of the commits references pointed at before the push
    created_at    {{time}} NOT NULL,
    lease_owner   TEXT NOT NULL DEFAULT '',
    lease_until   {{time}}        -- NULL: unclaimed
);
CREATE INDEX push_log_created ON push_log (created_at);

-- +goose Down
DROP TABLE push_log;
