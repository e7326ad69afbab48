-- Pull requests (POST /repos/{owner}/{repo}/pulls). A pull request is an
-- issue row (is_pull_request, sharing the repository's issue numbers)
-- plus this row: its head (repository and branch, and the commit it was
-- at when last seen), its base branch and the base commit it was last
-- compared with, the merge, and the background mergeability check.
-- check_due marks a pull request whose test merge is stale (created, or
-- its head or base moved); check_generation counts those marks, so a
-- check that raced a push does not record an outdated answer; the check
-- is claimed with a lease (lease_owner, lease_until) like other work.
-- commits, additions, deletions and changed_files are the counts of the
-- head against the merge base, kept when the head moves and frozen at
-- the merge.

-- +goose Up
CREATE TABLE pull_requests (
    id                 {{id}},
    issue_id           BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    repository_id      BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number             BIGINT NOT NULL,
    head_repository_id BIGINT REFERENCES repositories (id) ON DELETE SET NULL,
    head_ref           TEXT NOT NULL,
    head_sha           TEXT NOT NULL,
    base_ref           TEXT NOT NULL,
    base_sha           TEXT NOT NULL,
    draft              BOOLEAN NOT NULL DEFAULT FALSE,
    merged_at          {{time}},
    merged_by_id       BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    merge_commit_sha   TEXT NOT NULL DEFAULT '',
    mergeable          BOOLEAN,                            -- NULL until the check ran
    mergeable_state    TEXT NOT NULL DEFAULT 'unknown',    -- unknown | clean | dirty | draft
    check_due          BOOLEAN NOT NULL DEFAULT TRUE,
    check_generation   BIGINT NOT NULL DEFAULT 0,
    lease_owner        TEXT,
    lease_until        {{time}},
    commits            INTEGER NOT NULL DEFAULT 0,
    additions          INTEGER NOT NULL DEFAULT 0,
    deletions          INTEGER NOT NULL DEFAULT 0,
    changed_files      INTEGER NOT NULL DEFAULT 0
);
CREATE UNIQUE INDEX pull_requests_issue ON pull_requests (issue_id);
CREATE UNIQUE INDEX pull_requests_number ON pull_requests (repository_id, number);
CREATE INDEX pull_requests_head ON pull_requests (head_repository_id, head_ref);
CREATE INDEX pull_requests_base ON pull_requests (repository_id, base_ref);
CREATE INDEX pull_requests_check ON pull_requests (check_due, lease_until);

-- +goose Down
DROP TABLE pull_requests;
