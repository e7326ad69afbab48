-- Reactions (POST .../issues/{issue_number}/reactions and the other four
-- subjects): one row per user, subject and content. subject_type names
-- the table subject_id is an id of (Issue, IssueComment,
-- PullRequestReviewComment, CommitComment, Release); the repository's
-- deletion takes its reactions with it, and a subject's deletion deletes
-- its own (reactions.DeleteFor).

-- +goose Up
CREATE TABLE reactions (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    subject_type  TEXT NOT NULL,
    subject_id    BIGINT NOT NULL,
    user_id       BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    content       TEXT NOT NULL,
    created_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX reactions_once ON reactions (subject_type, subject_id, user_id, content);
CREATE INDEX reactions_subject ON reactions (subject_type, subject_id, id);

-- +goose Down
DROP TABLE reactions;
