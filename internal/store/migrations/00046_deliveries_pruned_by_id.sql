-- The delivery log is pruned in the order it was written, by id (see the
-- webhooks package's Pruner), not through an index of creation times:
-- that index was a fourth B-tree written with every logged delivery (1.5%
-- of the CPU a delivery costs in the webhooks bench).

-- +goose Up
DROP INDEX hook_deliveries_created;

-- +goose Down
CREATE INDEX hook_deliveries_created ON hook_deliveries (created_at);
