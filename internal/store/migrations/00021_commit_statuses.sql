-- Commit statuses (POST /repos/{owner}/{repo}/statuses/{sha}): each POST
-- adds a row; the combined status of a commit takes the latest row of
-- each context.

-- +goose Up
CREATE TABLE commit_statuses (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    sha           TEXT NOT NULL,
    state         TEXT NOT NULL,                 -- error | failure | pending | success
    context       TEXT NOT NULL,
    description   TEXT NOT NULL DEFAULT '',
    target_url    TEXT NOT NULL DEFAULT '',
    creator_id    BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    created_at    {{time}} NOT NULL
);
CREATE INDEX commit_statuses_sha ON commit_statuses (repository_id, sha, id);

-- +goose Down
DROP TABLE commit_statuses;
