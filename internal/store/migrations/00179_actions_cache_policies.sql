-- Actions cache usage policies (issue 51): a repository's limit of its
-- caches' total size, and an enterprise's default and maximum of its
-- repositories' limits, in gigabytes. A repository without a row takes
-- its enterprise's default; an enterprise without a row (or a NULL
-- column) the server's (10 GB default, 25 GB maximum).

-- +goose Up
CREATE TABLE actions_repo_cache_policies (
    repository_id BIGINT NOT NULL PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    limit_gb      BIGINT NOT NULL,
    updated_at    {{time}} NOT NULL
);

CREATE TABLE actions_enterprise_cache_policies (
    enterprise_id BIGINT NOT NULL PRIMARY KEY REFERENCES enterprises (id) ON DELETE CASCADE,
    limit_gb      BIGINT,
    max_limit_gb  BIGINT,
    updated_at    {{time}} NOT NULL
);

-- +goose Down
DROP TABLE actions_enterprise_cache_policies;
DROP TABLE actions_repo_cache_policies;
