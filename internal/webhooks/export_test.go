package webhooks

// PruneDeliveriesQuery is the pruner's delete, for tests of its plan.
const PruneDeliveriesQuery = pruneDeliveries
