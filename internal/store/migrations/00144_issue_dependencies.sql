-- Issue dependencies (/repos/{owner}/{repo}/issues/{issue_number}/dependencies/...):
-- a row says that issue_id is blocked by blocking_id; either may be in any
-- repository. Deleting either issue (or its repository) removes the row.
-- The issue JSON's issue_dependencies_summary counts them in both
-- directions.

-- +goose Up
CREATE TABLE issue_dependencies (
    issue_id    BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    blocking_id BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    created_at  {{time}} NOT NULL,
    PRIMARY KEY (issue_id, blocking_id)
);
CREATE INDEX issue_dependencies_blocking ON issue_dependencies (blocking_id);

-- +goose Down
DROP TABLE issue_dependencies;
