-- The old names of renamed repositories: requests to OWNER/OLD (API and
-- git) keep reaching the repository until a repository takes the old name
-- (creating or renaming one to it deletes the row).

-- +goose Up
CREATE TABLE repo_redirects (
    owner_id      BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name_lower    TEXT NOT NULL,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    created_at    {{time}} NOT NULL,
    PRIMARY KEY (owner_id, name_lower)
);
CREATE INDEX repo_redirects_repository ON repo_redirects (repository_id);

-- +goose Down
DROP TABLE repo_redirects;
