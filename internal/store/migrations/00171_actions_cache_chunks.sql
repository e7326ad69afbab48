-- Actions cache v1 (internal/actions): the chunks of a reserved cache
-- entry uploaded with PATCH .../_apis/artifactcache/caches/{id} and a
-- Content-Range, kept in the blob store until the commit joins them in
-- offset order.

-- +goose Up
CREATE TABLE actions_cache_chunks (
    cache_id BIGINT NOT NULL REFERENCES actions_caches (id) ON DELETE CASCADE,
    start_offset BIGINT NOT NULL,
    end_offset BIGINT NOT NULL,
    PRIMARY KEY (cache_id, start_offset)
);

-- +goose Down
DROP TABLE actions_cache_chunks;
