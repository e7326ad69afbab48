-- The dispatcher's work index holds the pending deliveries only. As
-- (state, due_at) over every row, each delivery's index entry moved when
-- it was recorded done, from the pending range to the done range, and
-- the done range grew with the whole delivery log: every commit wrote
-- its pages in two places of an index no query reads for done rows (the
-- log is listed through hook_deliveries_hook, pruned through
-- hook_deliveries_created). Partial, a recorded delivery's entry is
-- deleted, and the index stays as small as the backlog. The claim's
-- "state = 'pending' AND due_at <= now ORDER BY due_at, id" reads it in
-- order on both databases.

-- +goose Up
DROP INDEX hook_deliveries_work;
CREATE INDEX hook_deliveries_pending ON hook_deliveries (due_at, id) WHERE state = 'pending';

-- +goose Down
DROP INDEX hook_deliveries_pending;
CREATE INDEX hook_deliveries_work ON hook_deliveries (state, due_at);
