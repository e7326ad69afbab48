-- Actions caches (internal/actions): the cache entries jobs save through
-- the results service's cache service, scoped to the ref of the run that
-- saved them (a run reads its own ref's and the default branch's), their
-- archive in blob storage; an entry is readable once finalized.

-- +goose Up
CREATE TABLE actions_caches (
    id                {{id}},
    repository_id     BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    cache_key         TEXT NOT NULL,
    version           TEXT NOT NULL,
    ref               TEXT NOT NULL,
    size_in_bytes     BIGINT NOT NULL DEFAULT 0,
    finalized         BOOLEAN NOT NULL DEFAULT FALSE,
    upload_token_hash TEXT NOT NULL DEFAULT '',
    created_at        {{time}} NOT NULL,
    last_accessed_at  {{time}} NOT NULL,
    UNIQUE (repository_id, ref, cache_key, version)
);
CREATE INDEX actions_caches_repository ON actions_caches (repository_id, last_accessed_at);

-- +goose Down
DROP TABLE actions_caches;
