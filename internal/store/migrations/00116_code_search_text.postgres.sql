-- PostgreSQL's text indexes of the code search: pg_trgm GIN indexes on
-- the lowercased file content and path and commit message, which serve
-- lower(column) LIKE '%words%' (the path's too: a word matches content
-- OR path, and one unindexed side of an OR scans the table). The SQLite twin is
-- 00116_code_search_text.sqlite.sql.
--
-- An extension is the database's, not a schema's: it goes to public
-- (and its operator class is named there), whatever schema this forge
-- migrates, and the advisory lock serializes its creation between
-- schemas migrating at once (tests, one schema each).

-- +goose Up
SELECT pg_advisory_xact_lock(7294011518);
CREATE EXTENSION IF NOT EXISTS pg_trgm SCHEMA public;
CREATE INDEX code_files_content_trgm ON code_files USING gin (lower(content) public.gin_trgm_ops);
CREATE INDEX code_files_path_trgm ON code_files USING gin (lower(path) public.gin_trgm_ops);
CREATE INDEX code_commits_message_trgm ON code_commits USING gin (lower(message) public.gin_trgm_ops);

-- +goose Down
DROP INDEX code_commits_message_trgm;
DROP INDEX code_files_path_trgm;
DROP INDEX code_files_content_trgm;
