-- PostgreSQL keeps its text indexes of the issue search as they are
-- (00117: a pg_trgm GIN index per lowercased column, combined by the
-- planner's bitmap OR); this number's SQLite twin,
-- 00173_issue_search_one_text_index.sqlite.sql, puts titles and bodies
-- in one FTS5 table. Nothing to do here.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
