-- Domain events: the activity spine. Feeds read this table; webhooks and
-- other sinks receive each event in the transaction that stores it.

-- +goose Up
CREATE TABLE events (
    id          {{id}},
    type        TEXT NOT NULL,          -- feed type: PushEvent, CreateEvent, WatchEvent, ...
    actor_id    BIGINT NOT NULL,
    actor_login TEXT NOT NULL,          -- as it was when the event happened
    repo_id     BIGINT,
    repo_name   TEXT NOT NULL DEFAULT '', -- OWNER/NAME when the event happened
    org_id      BIGINT,
    org_login   TEXT NOT NULL DEFAULT '',
    public      BOOLEAN NOT NULL,
    payload     TEXT NOT NULL,          -- the feed payload, JSON
    created_at  {{time}} NOT NULL
);
CREATE INDEX events_public ON events (public, id);
CREATE INDEX events_actor ON events (actor_id, id);
CREATE INDEX events_repo ON events (repo_id, id);
CREATE INDEX events_org ON events (org_id, id);
CREATE INDEX events_created ON events (created_at);

-- +goose Down
DROP TABLE events;
