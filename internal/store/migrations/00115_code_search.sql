-- The code search index (internal/codesearch): what git holds on each
-- repository's default branch, indexed by a leased worker after a push.
-- code_search_work is the work: a push of the default branch bumps
-- requested (in the push's transaction); the indexer claims a row whose
-- indexed generation is behind with a lease, indexes, and records the
-- generation and the head it indexed in the transaction of its rows.
-- code_files are the files of the indexed tree (text up to 384 KB),
-- code_commits the commits of the default branch. Rows follow their
-- repository (deleted with it; visibility is checked at read time). The
-- text indexes are the dialects' own: 00116_code_search_text.*.sql.

-- +goose Up
CREATE TABLE code_search_work (
    repository_id BIGINT PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    requested     BIGINT NOT NULL DEFAULT 1,
    indexed       BIGINT NOT NULL DEFAULT 0,
    head_sha      TEXT NOT NULL DEFAULT '',
    lease_owner   TEXT NOT NULL DEFAULT '',
    lease_until   {{time}}
);
CREATE INDEX code_search_work_due ON code_search_work (repository_id) WHERE requested > indexed;

CREATE TABLE code_files (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    path          TEXT NOT NULL,
    name          TEXT NOT NULL,
    extension     TEXT NOT NULL,
    blob_sha      TEXT NOT NULL,
    size          BIGINT NOT NULL,
    content       TEXT NOT NULL
);
CREATE UNIQUE INDEX code_files_path ON code_files (repository_id, path);

CREATE TABLE code_commits (
    id              {{id}},
    repository_id   BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    sha             TEXT NOT NULL,
    tree_sha        TEXT NOT NULL,
    parents         TEXT NOT NULL,
    parent_count    INTEGER NOT NULL,
    author_name     TEXT NOT NULL,
    author_email    TEXT NOT NULL,
    author_date     {{time}} NOT NULL,
    committer_name  TEXT NOT NULL,
    committer_email TEXT NOT NULL,
    committer_date  {{time}} NOT NULL,
    message         TEXT NOT NULL
);
CREATE UNIQUE INDEX code_commits_sha ON code_commits (repository_id, sha);
CREATE INDEX code_commits_committer_date ON code_commits (committer_date);
CREATE INDEX code_commits_author_email ON code_commits (lower(author_email));

-- +goose Down
DROP TABLE code_commits;
DROP TABLE code_files;
DROP TABLE code_search_work;
