-- Secret scanning (internal/secretscanning). secret_scanning_work is the
-- work: one row per pushed reference update of a repository with secret
-- scanning on, written in the push's transaction; the scanner claims it
-- with a lease, reads the blobs the new commits add, and writes alerts and
-- locations and deletes the row in one transaction.
-- secret_scanning_commits are the commits already scanned (a new branch
-- is not scanned again from the root). An alert is one distinct secret of
-- one type in one repository; its locations are where it was found.

-- +goose Up
CREATE TABLE secret_scanning_work (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    before_sha    TEXT NOT NULL,
    after_sha     TEXT NOT NULL,
    pusher_id     BIGINT,
    lease_owner   TEXT NOT NULL DEFAULT '',
    lease_until   {{time}},
    created_at    {{time}} NOT NULL
);

-- secret_scanning_scans is each repository's latest finished scan, for
-- the scan history.
CREATE TABLE secret_scanning_scans (
    repository_id BIGINT PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    started_at    {{time}} NOT NULL,
    completed_at  {{time}} NOT NULL
);

CREATE TABLE secret_scanning_commits (
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    sha           TEXT NOT NULL,
    PRIMARY KEY (repository_id, sha)
);

CREATE TABLE secret_scanning_alerts (
    id                 {{id}},
    repository_id      BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number             BIGINT NOT NULL,
    secret_type        TEXT NOT NULL,
    secret             TEXT NOT NULL,
    state              TEXT NOT NULL DEFAULT 'open',
    resolution         TEXT,
    resolution_comment TEXT,
    resolved_by_id     BIGINT,
    resolved_at        {{time}},
    created_at         {{time}} NOT NULL,
    updated_at         {{time}} NOT NULL
);
CREATE UNIQUE INDEX secret_scanning_alerts_number ON secret_scanning_alerts (repository_id, number);
CREATE UNIQUE INDEX secret_scanning_alerts_secret ON secret_scanning_alerts (repository_id, secret_type, secret);

CREATE TABLE secret_scanning_locations (
    id           {{id}},
    alert_id     BIGINT NOT NULL REFERENCES secret_scanning_alerts (id) ON DELETE CASCADE,
    path         TEXT NOT NULL,
    start_line   BIGINT NOT NULL,
    end_line     BIGINT NOT NULL,
    start_column BIGINT NOT NULL,
    end_column   BIGINT NOT NULL,
    blob_sha     TEXT NOT NULL,
    commit_sha   TEXT NOT NULL,
    created_at   {{time}} NOT NULL
);
CREATE UNIQUE INDEX secret_scanning_locations_place ON secret_scanning_locations (alert_id, blob_sha, path, start_line, start_column);

-- +goose Down
DROP TABLE secret_scanning_locations;
DROP TABLE secret_scanning_alerts;
DROP TABLE secret_scanning_commits;
DROP TABLE secret_scanning_scans;
DROP TABLE secret_scanning_work;
