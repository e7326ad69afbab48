-- Checks (issue 47): check suites, one per app and head commit of a
-- repository, created when a push lands for the apps that subscribe to
-- check_suite, or by the app (POST .../check-suites, or its first check
-- run); check runs, which only apps create and update, each in its app's
-- suite; their annotations, appended across updates; and each
-- repository's preference, per app, of automatic suite creation.
-- A suite's status and conclusion roll up from the latest run of each
-- name in it (latest marks it, so that the roll-up and the lists read
-- one run per name however many runs a name has). head_commit is the simple-commit object of the head, kept
-- as JSON when the suite is made.

-- +goose Up
CREATE TABLE check_suites (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    app_id        BIGINT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    head_sha      TEXT NOT NULL,
    head_branch   TEXT,                         -- NULL when no branch of the repository names the commit
    before_sha    TEXT,
    after_sha     TEXT,
    head_commit   TEXT NOT NULL,                -- JSON simple-commit
    status        TEXT NOT NULL DEFAULT 'queued', -- queued | in_progress | completed
    conclusion    TEXT,
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX check_suites_app_head ON check_suites (repository_id, head_sha, app_id);

CREATE TABLE check_runs (
    id                {{id}},
    check_suite_id    BIGINT NOT NULL REFERENCES check_suites (id) ON DELETE CASCADE,
    repository_id     BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    app_id            BIGINT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    head_sha          TEXT NOT NULL,
    name              TEXT NOT NULL,
    external_id       TEXT NOT NULL DEFAULT '',
    details_url       TEXT NOT NULL DEFAULT '',
    status            TEXT NOT NULL,            -- queued | in_progress | completed | waiting | requested | pending
    conclusion        TEXT,
    started_at        {{time}},
    completed_at      {{time}},
    title             TEXT,
    summary           TEXT,
    text              TEXT,
    annotations_count BIGINT NOT NULL DEFAULT 0,
    latest            BOOLEAN NOT NULL DEFAULT TRUE, -- the newest run of its name in its suite
    actions           TEXT NOT NULL DEFAULT '[]', -- JSON array of {label, description, identifier}
    created_at        {{time}} NOT NULL,
    updated_at        {{time}} NOT NULL
);
CREATE INDEX check_runs_head ON check_runs (repository_id, head_sha, id);
CREATE INDEX check_runs_suite ON check_runs (check_suite_id, latest, name);

CREATE TABLE check_annotations (
    id               {{id}},
    check_run_id     BIGINT NOT NULL REFERENCES check_runs (id) ON DELETE CASCADE,
    path             TEXT NOT NULL,
    start_line       BIGINT NOT NULL,
    end_line         BIGINT NOT NULL,
    start_column     BIGINT,
    end_column       BIGINT,
    annotation_level TEXT NOT NULL,            -- notice | warning | failure
    title            TEXT,
    message          TEXT NOT NULL,
    raw_details      TEXT
);
CREATE INDEX check_annotations_run ON check_annotations (check_run_id, id);

CREATE TABLE check_suite_preferences (
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    app_id        BIGINT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    auto_trigger  BOOLEAN NOT NULL,
    PRIMARY KEY (repository_id, app_id)
);

-- +goose Down
DROP TABLE check_suite_preferences;
DROP TABLE check_annotations;
DROP TABLE check_runs;
DROP TABLE check_suites;
