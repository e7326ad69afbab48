-- The events of issues and pull requests (GET .../issues/{issue_number}/events,
-- .../issues/events, the timeline): one row per labeled, unlabeled,
-- assigned, unassigned, milestoned, demilestoned, renamed, closed,
-- reopened, locked and unlocked, written in the change's transaction.
-- Labels and milestones are kept by name as they were, as the platform
-- shows them after a label is renamed or deleted.

-- +goose Up
CREATE TABLE issue_events (
    id              {{id}},
    repository_id   BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    issue_id        BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    actor_id        BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    event           TEXT NOT NULL,
    label_name      TEXT NOT NULL DEFAULT '',
    label_color     TEXT NOT NULL DEFAULT '',
    assignee_id     BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    milestone_title TEXT NOT NULL DEFAULT '',
    rename_from     TEXT NOT NULL DEFAULT '',
    rename_to       TEXT NOT NULL DEFAULT '',
    lock_reason     TEXT NOT NULL DEFAULT '',
    state_reason    TEXT NOT NULL DEFAULT '',
    commit_id       TEXT NOT NULL DEFAULT '',
    created_at      {{time}} NOT NULL
);
CREATE INDEX issue_events_issue ON issue_events (issue_id, id);
CREATE INDEX issue_events_repository ON issue_events (repository_id, id);

-- +goose Down
DROP TABLE issue_events;
