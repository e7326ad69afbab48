-- The license detected in a repository's files (LICENSE, COPYING, ...) on
-- its default branch, kept by the licenses area when a push moves that
-- branch: the platform's license key (a key of GET /licenses, or "other"
-- for a license file it does not recognise), the file and the commit it
-- was detected at. No row: no license file (or none pushed since).

-- +goose Up
CREATE TABLE repository_licenses (
    repository_id BIGINT PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    license_key   TEXT NOT NULL,
    path          TEXT NOT NULL,
    commit_sha    TEXT NOT NULL
);

-- +goose Down
DROP TABLE repository_licenses;
