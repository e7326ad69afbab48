-- Archived repositories (PATCH /repos/{owner}/{repo} archived, GraphQL
-- archiveRepository and unarchiveRepository): the flag the repository
-- JSON's archived, GraphQL's isArchived and search's archived: qualifier
-- read, and that makes the repository read-only (pushes and the API's
-- writes refused, internal/access and internal/githost).

-- +goose Up
ALTER TABLE repositories ADD COLUMN archived BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE repositories DROP COLUMN archived;
