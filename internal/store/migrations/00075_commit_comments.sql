-- Commit comments (POST /repos/{owner}/{repo}/commits/{commit_sha}/comments):
-- a comment on a whole commit, on a file of its diff (path), or on a line
-- of that file's diff (diff_position, the platform's "position", and
-- file_line, its "line").

-- +goose Up
CREATE TABLE commit_comments (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    commit_id     TEXT NOT NULL,
    user_id       BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    body          TEXT NOT NULL,
    path          TEXT,
    diff_position INTEGER,
    file_line     INTEGER,
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL
);
CREATE INDEX commit_comments_repo ON commit_comments (repository_id, id);
CREATE INDEX commit_comments_commit ON commit_comments (repository_id, commit_id, id);

-- +goose Down
DROP TABLE commit_comments;
