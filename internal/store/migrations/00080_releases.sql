-- Releases (issue 48 part 1): a release names a tag of its repository
-- (created from target_commitish when it is published, if missing); drafts
-- have no published_at. latest_at is when the release was last made the
-- repository's latest (make_latest true); the latest release is the
-- published non-prerelease with the newest latest_at, else the newest
-- created. Assets are files uploaded to a release, their bytes in the blob
-- store under blob_key; state is open while the upload runs, then
-- uploaded.

-- +goose Up
CREATE TABLE releases (
    id               {{id}},
    repository_id    BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    tag_name         TEXT NOT NULL,
    target_commitish TEXT NOT NULL,
    name             TEXT,
    body             TEXT,
    draft            BOOLEAN NOT NULL DEFAULT FALSE,
    prerelease       BOOLEAN NOT NULL DEFAULT FALSE,
    author_id        BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    created_at       {{time}} NOT NULL,
    updated_at       {{time}} NOT NULL,
    published_at     {{time}},
    latest_at        {{time}}
);
CREATE UNIQUE INDEX releases_tag ON releases (repository_id, tag_name);
CREATE INDEX releases_repository ON releases (repository_id, created_at, id);

CREATE TABLE release_assets (
    id             {{id}},
    release_id     BIGINT NOT NULL REFERENCES releases (id) ON DELETE CASCADE,
    repository_id  BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    name           TEXT NOT NULL,
    label          TEXT,
    content_type   TEXT NOT NULL,
    size           BIGINT NOT NULL DEFAULT 0,
    digest         TEXT,
    state          TEXT NOT NULL DEFAULT 'open', -- open | uploaded
    download_count BIGINT NOT NULL DEFAULT 0,
    uploader_id    BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    blob_key       TEXT NOT NULL,
    created_at     {{time}} NOT NULL,
    updated_at     {{time}} NOT NULL
);
CREATE UNIQUE INDEX release_assets_name ON release_assets (release_id, name);
CREATE INDEX release_assets_repository ON release_assets (repository_id);

-- +goose Down
DROP TABLE release_assets;
DROP TABLE releases;
