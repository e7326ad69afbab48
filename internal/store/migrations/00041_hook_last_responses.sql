-- A hook's last response moves out of the hooks table into one of its own.
-- The dispatcher wrote it with every batch of outcomes it recorded, and
-- every write to hooks drops each server's cache of the hooks an event is
-- delivered to (and, on PostgreSQL, notifies the other servers): under a
-- steady flow of deliveries the API read the hooks of nearly every event
-- from the database. A hook without a row has no response yet.

-- +goose Up
CREATE TABLE hook_last_responses (
    hook_id      BIGINT PRIMARY KEY REFERENCES hooks (id) ON DELETE CASCADE,
    code         INTEGER,                -- NULL: no HTTP response (refused, timed out)
    status       TEXT NOT NULL,          -- active | failed
    message      TEXT NOT NULL,
    responded_at {{time}} NOT NULL
);
INSERT INTO hook_last_responses (hook_id, code, status, message, responded_at)
    SELECT id, last_response_code, last_response_status, COALESCE(last_response_message, ''), last_response_at
    FROM hooks WHERE last_response_at IS NOT NULL AND last_response_status IS NOT NULL;
ALTER TABLE hooks DROP COLUMN last_response_code;
ALTER TABLE hooks DROP COLUMN last_response_status;
ALTER TABLE hooks DROP COLUMN last_response_message;
ALTER TABLE hooks DROP COLUMN last_response_at;

-- +goose Down
ALTER TABLE hooks ADD COLUMN last_response_code INTEGER;
ALTER TABLE hooks ADD COLUMN last_response_status TEXT;
ALTER TABLE hooks ADD COLUMN last_response_message TEXT;
ALTER TABLE hooks ADD COLUMN last_response_at {{time}};
UPDATE hooks SET last_response_code = r.code, last_response_status = r.status, last_response_message = r.message,
    last_response_at = r.responded_at
    FROM hook_last_responses r WHERE r.hook_id = hooks.id;
DROP TABLE hook_last_responses;
