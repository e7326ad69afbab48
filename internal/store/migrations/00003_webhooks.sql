-- Webhooks: repository and organization hooks, the payloads of the events
-- they receive, and their deliveries. A delivery row is both the work item
-- of the dispatcher (claimed with a lease) and the delivery log.

-- +goose Up
CREATE TABLE hooks (
    id                    {{id}},
    repo_id               BIGINT REFERENCES repositories (id) ON DELETE CASCADE, -- set on repository hooks
    org_id                BIGINT REFERENCES accounts (id) ON DELETE CASCADE,     -- set on organization hooks
    name                  TEXT NOT NULL DEFAULT 'web',
    active                BOOLEAN NOT NULL DEFAULT TRUE,
    events                TEXT NOT NULL,              -- JSON array of event names, sorted
    url                   TEXT NOT NULL,
    content_type          TEXT NOT NULL DEFAULT 'form', -- json | form
    insecure_ssl          TEXT NOT NULL DEFAULT '0',    -- '0' | '1'
    secret                TEXT NOT NULL DEFAULT '',     -- sealed with the server key; '' for none
    username              TEXT NOT NULL DEFAULT '',     -- organization hooks: config.username
    password              TEXT NOT NULL DEFAULT '',     -- sealed; config.password
    app_id                BIGINT,                       -- the OAuth app whose token created the hook
    creator_id            BIGINT,
    last_response_code    INTEGER,
    last_response_status  TEXT,                         -- NULL: unused
    last_response_message TEXT,
    last_response_at      {{time}},
    deleted_at            {{time}},                     -- deleted hooks keep their deliveries (meta) until pruned
    created_at            {{time}} NOT NULL,
    updated_at            {{time}} NOT NULL
);
CREATE INDEX hooks_repo ON hooks (repo_id, id);
CREATE INDEX hooks_org ON hooks (org_id, id);

-- One row per event sent to hooks: all deliveries of one event (and their
-- redeliveries) share its guid and payload.
CREATE TABLE hook_payloads (
    id            {{id}},
    guid          TEXT NOT NULL,
    event         TEXT NOT NULL,
    action        TEXT NOT NULL DEFAULT '',
    repository_id BIGINT,                        -- the repository of the event, if any
    payload       TEXT NOT NULL,                 -- the JSON payload, exactly as sent
    created_at    {{time}} NOT NULL
);
CREATE INDEX hook_payloads_created ON hook_payloads (created_at);
CREATE INDEX hook_payloads_repo_event ON hook_payloads (repository_id, event, id);

CREATE TABLE hook_deliveries (
    id               {{id}},
    hook_id          BIGINT NOT NULL REFERENCES hooks (id) ON DELETE CASCADE,
    payload_id       BIGINT NOT NULL REFERENCES hook_payloads (id) ON DELETE CASCADE,
    guid             TEXT NOT NULL,
    event            TEXT NOT NULL,
    action           TEXT NOT NULL DEFAULT '',
    redelivery       BOOLEAN NOT NULL DEFAULT FALSE,
    repository_id    BIGINT,
    installation_id  BIGINT,
    state            TEXT NOT NULL DEFAULT 'pending', -- pending | sending | done
    due_at           {{time}} NOT NULL,               -- not sent before (throttling, retry backoff)
    lease_owner      TEXT NOT NULL DEFAULT '',
    lease_until      {{time}},
    attempts         INTEGER NOT NULL DEFAULT 0,      -- claims so far
    retries_left     INTEGER NOT NULL DEFAULT 0,      -- automatic retries still allowed after a failure
    throttled_at     {{time}},
    delivered_at     {{time}},
    duration         DOUBLE PRECISION NOT NULL DEFAULT 0, -- seconds
    status           TEXT NOT NULL DEFAULT '',
    status_code      INTEGER NOT NULL DEFAULT 0,      -- 0: no response
    url              TEXT NOT NULL DEFAULT '',
    request_headers  TEXT NOT NULL DEFAULT '{}',      -- JSON object
    response_headers TEXT NOT NULL DEFAULT '{}',      -- JSON object
    response_body    TEXT NOT NULL DEFAULT '',
    created_at       {{time}} NOT NULL
);
CREATE INDEX hook_deliveries_hook ON hook_deliveries (hook_id, id);
CREATE INDEX hook_deliveries_work ON hook_deliveries (state, due_at);
CREATE INDEX hook_deliveries_payload ON hook_deliveries (payload_id);
CREATE INDEX hook_deliveries_created ON hook_deliveries (created_at);

-- +goose Down
DROP TABLE hook_deliveries;
DROP TABLE hook_payloads;
DROP TABLE hooks;
