-- files_at is the commit whose tree code_files holds for the repository
-- ('' when unknown): the indexer diffs that tree with the new head's
-- instead of listing the whole tree and comparing it with the rows
-- (internal/codesearch). A run that writes its files in several
-- transactions clears it in the first, so that a run cut short leaves
-- the next one comparing the whole tree with the rows. Rows of before
-- this migration start at '' and are compared once.

-- +goose Up
ALTER TABLE code_search_work ADD COLUMN files_at TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE code_search_work DROP COLUMN files_at;
