-- Issues (POST /repos/{owner}/{repo}/issues) with their comments, labels,
-- assignees and milestones. Issue and milestone numbers are allocated per
-- repository from issue_counters, a row updated in the creating
-- transaction (INSERT ... ON CONFLICT DO UPDATE ... RETURNING), which
-- serializes concurrent creates on both databases. Pull requests will
-- share the issue sequence: an issue row with is_pull_request set.

-- +goose Up
CREATE TABLE issue_counters (
    repository_id BIGINT PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    last_issue    BIGINT NOT NULL DEFAULT 0,
    last_milestone BIGINT NOT NULL DEFAULT 0
);
CREATE TABLE milestones (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number        BIGINT NOT NULL,
    title         TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    state         TEXT NOT NULL DEFAULT 'open',   -- open | closed
    due_on        {{time}},
    creator_id    BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL,
    closed_at     {{time}}
);
CREATE UNIQUE INDEX milestones_number ON milestones (repository_id, number);
CREATE UNIQUE INDEX milestones_title ON milestones (repository_id, title);
CREATE TABLE labels (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    color         TEXT NOT NULL,                 -- six hex digits, lower case
    description   TEXT NOT NULL DEFAULT '',
    created_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX labels_name ON labels (repository_id, lower(name));
CREATE TABLE issues (
    id                 {{id}},
    repository_id      BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number             BIGINT NOT NULL,
    is_pull_request    BOOLEAN NOT NULL DEFAULT FALSE,
    title              TEXT NOT NULL,
    body               TEXT NOT NULL DEFAULT '',
    state              TEXT NOT NULL DEFAULT 'open',   -- open | closed
    state_reason       TEXT NOT NULL DEFAULT '',       -- completed | not_planned | duplicate | reopened
    locked             BOOLEAN NOT NULL DEFAULT FALSE,
    active_lock_reason TEXT NOT NULL DEFAULT '',
    user_id            BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    closed_by_id       BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    milestone_id       BIGINT REFERENCES milestones (id) ON DELETE SET NULL,
    comments           INTEGER NOT NULL DEFAULT 0,
    created_at         {{time}} NOT NULL,
    updated_at         {{time}} NOT NULL,
    closed_at          {{time}}
);
CREATE UNIQUE INDEX issues_number ON issues (repository_id, number);
CREATE INDEX issues_state_id ON issues (repository_id, state, id);
CREATE INDEX issues_state_updated ON issues (repository_id, state, updated_at);
CREATE INDEX issues_user ON issues (user_id);
CREATE INDEX issues_milestone ON issues (milestone_id);
CREATE TABLE issue_labels (
    issue_id BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    label_id BIGINT NOT NULL REFERENCES labels (id) ON DELETE CASCADE,
    PRIMARY KEY (issue_id, label_id)
);
CREATE INDEX issue_labels_label ON issue_labels (label_id);
CREATE TABLE issue_assignees (
    issue_id BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    user_id  BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    PRIMARY KEY (issue_id, user_id)
);
CREATE INDEX issue_assignees_user ON issue_assignees (user_id);
CREATE TABLE issue_comments (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    issue_id      BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    user_id       BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    body          TEXT NOT NULL,
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL
);
CREATE INDEX issue_comments_issue ON issue_comments (issue_id, id);
CREATE INDEX issue_comments_repo ON issue_comments (repository_id, id);

-- +goose Down
DROP TABLE issue_comments;
DROP TABLE issue_assignees;
DROP TABLE issue_labels;
DROP TABLE issues;
DROP TABLE labels;
DROP TABLE milestones;
DROP TABLE issue_counters;
