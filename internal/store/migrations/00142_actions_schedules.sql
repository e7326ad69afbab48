-- Actions schedules (internal/actions): the schedule triggers (on.schedule
-- cron expressions) of the workflows on the head of each repository's
-- default branch, as last pushed, with the next time each fires. The
-- scheduler claims a due row with a lease and, in one transaction, starts
-- the run, moves next_at on and ends the lease (a killed scheduler's row
-- is due again once its lease expired: no run is lost or doubled).

-- +goose Up
CREATE TABLE actions_schedules (
    workflow_id   BIGINT NOT NULL REFERENCES actions_workflows (id) ON DELETE CASCADE,
    cron          TEXT NOT NULL,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    next_at       {{time}} NOT NULL,
    lease_owner   TEXT NOT NULL DEFAULT '',
    lease_until   {{time}},
    PRIMARY KEY (workflow_id, cron)
);
CREATE INDEX actions_schedules_due ON actions_schedules (next_at);
CREATE INDEX actions_schedules_repository ON actions_schedules (repository_id);

-- +goose Down
DROP TABLE actions_schedules;
