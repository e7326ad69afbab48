-- Statistics computed from a repository's git history, kept by the
-- repostats area and keyed by the default branch's head they were
-- computed at: kind 'history' (per author and week: commits, additions,
-- deletions; per day: commits; the punch card) and 'languages' (bytes of
-- each language in the head's tree), each a JSON document. A row whose
-- head is not the branch's head any more is computed again and replaced.

-- +goose Up
CREATE TABLE repository_stats (
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    kind          TEXT NOT NULL,
    head_sha      TEXT NOT NULL,
    body          TEXT NOT NULL,
    PRIMARY KEY (repository_id, kind)
);

-- +goose Down
DROP TABLE repository_stats;
