-- PostgreSQL's text indexes of the code search: pg_trgm GIN indexes on
-- the lowercased file content and commit message, which serve
-- lower(column) LIKE '%words%'. The SQLite twin is
-- 00116_code_search_text.sqlite.sql.

-- +goose Up
CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE INDEX code_files_content_trgm ON code_files USING gin (lower(content) gin_trgm_ops);
CREATE INDEX code_commits_message_trgm ON code_commits USING gin (lower(message) gin_trgm_ops);

-- +goose Down
DROP INDEX code_commits_message_trgm;
DROP INDEX code_files_content_trgm;
