-- The deliveries handed over to a dispatcher in memory (see the webhooks
-- package's handoff) are listed here until they are written: the API's
-- transaction no longer inserts their hook_deliveries rows, which the
-- dispatcher then updated with the outcome; the dispatcher inserts each
-- row once, when the outcome is known, or when it puts the delivery back
-- (over a rate limit, a shutdown).
--
-- A row lists the hooks (ids, comma-separated) whose deliveries of the
-- payload were handed over unwritten, the lease owner of the dispatcher
-- that holds them and its lease's end. The dispatcher deletes it when it
-- has written them all. A row whose lease ended (the process died) is
-- taken by a claim: it writes the deliveries of the listed hooks that
-- have none of the payload yet, due now, and deletes it. A table of its
-- own, not columns of hook_payloads: an UPDATE of a payload row rewrites
-- its whole payload text.

-- +goose Up
CREATE TABLE hook_outboxes (
    payload_id  BIGINT PRIMARY KEY REFERENCES hook_payloads (id) ON DELETE CASCADE,
    hooks       TEXT NOT NULL,
    owner       TEXT NOT NULL,
    lease_until {{time}} NOT NULL
);
CREATE INDEX hook_outboxes_lease ON hook_outboxes (lease_until);

-- +goose Down
DROP TABLE hook_outboxes;
