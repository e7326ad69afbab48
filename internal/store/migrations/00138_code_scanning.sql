-- Code scanning (internal/codescanning). code_scanning_sarifs are the
-- uploads: the SARIF (decompressed) and its processing status; a pending
-- upload is the work a leased worker claims, turning each run into an
-- analysis and its results into alerts and instances in one transaction.
-- An alert is one finding of one tool's rule at one place (its
-- fingerprint); an instance is the alert as one analysis saw it. Whether
-- an alert is open or fixed follows from the latest analysis of each set
-- (ref, tool, category) it was seen in; dismissed is the user's.

-- +goose Up
CREATE TABLE code_scanning_sarifs (
    id            TEXT PRIMARY KEY,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    commit_sha    TEXT NOT NULL,
    ref           TEXT NOT NULL,
    tool_name     TEXT NOT NULL DEFAULT '',
    sarif         TEXT NOT NULL,
    uploader_id   BIGINT,
    status        TEXT NOT NULL DEFAULT 'pending',
    errors        TEXT NOT NULL DEFAULT '[]',
    lease_owner   TEXT NOT NULL DEFAULT '',
    lease_until   {{time}},
    created_at    {{time}} NOT NULL
);
CREATE INDEX code_scanning_sarifs_due ON code_scanning_sarifs (created_at) WHERE status = 'pending';

CREATE TABLE code_scanning_analyses (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    sarif_id      TEXT NOT NULL,
    ref           TEXT NOT NULL,
    commit_sha    TEXT NOT NULL,
    category      TEXT NOT NULL,
    tool_name     TEXT NOT NULL,
    tool_version  TEXT,
    tool_guid     TEXT,
    results_count BIGINT NOT NULL,
    rules_count   BIGINT NOT NULL,
    created_at    {{time}} NOT NULL
);
CREATE INDEX code_scanning_analyses_set ON code_scanning_analyses (repository_id, ref, tool_name, category, id);

CREATE TABLE code_scanning_alerts (
    id                      {{id}},
    repository_id           BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number                  BIGINT NOT NULL,
    tool_name               TEXT NOT NULL,
    tool_version            TEXT,
    tool_guid               TEXT,
    rule_id                 TEXT NOT NULL,
    rule_name               TEXT NOT NULL,
    rule_severity           TEXT,
    security_severity_level TEXT,
    rule_description        TEXT NOT NULL,
    rule_full_description   TEXT NOT NULL,
    rule_tags               TEXT NOT NULL DEFAULT '[]',
    rule_help               TEXT,
    rule_help_uri           TEXT,
    fingerprint             TEXT NOT NULL,
    state                   TEXT NOT NULL DEFAULT 'open',
    dismissed               BOOLEAN NOT NULL DEFAULT FALSE,
    dismissed_by_id         BIGINT,
    dismissed_at            {{time}},
    dismissed_reason        TEXT,
    dismissed_comment       TEXT,
    fixed_at                {{time}},
    created_at              {{time}} NOT NULL,
    updated_at              {{time}} NOT NULL
);
CREATE UNIQUE INDEX code_scanning_alerts_number ON code_scanning_alerts (repository_id, number);
CREATE UNIQUE INDEX code_scanning_alerts_identity ON code_scanning_alerts (repository_id, tool_name, rule_id, fingerprint);

CREATE TABLE code_scanning_instances (
    id              {{id}},
    alert_id        BIGINT NOT NULL REFERENCES code_scanning_alerts (id) ON DELETE CASCADE,
    analysis_id     BIGINT NOT NULL REFERENCES code_scanning_analyses (id) ON DELETE CASCADE,
    message         TEXT NOT NULL,
    path            TEXT NOT NULL,
    start_line      BIGINT NOT NULL,
    end_line        BIGINT NOT NULL,
    start_column    BIGINT NOT NULL,
    end_column      BIGINT NOT NULL,
    classifications TEXT NOT NULL DEFAULT '[]'
);
CREATE UNIQUE INDEX code_scanning_instances_seen ON code_scanning_instances (alert_id, analysis_id);
CREATE INDEX code_scanning_instances_analysis ON code_scanning_instances (analysis_id);

-- +goose Down
DROP TABLE code_scanning_instances;
DROP TABLE code_scanning_alerts;
DROP TABLE code_scanning_analyses;
DROP TABLE code_scanning_sarifs;
