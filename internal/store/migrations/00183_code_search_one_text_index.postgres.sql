-- PostgreSQL keeps its text indexes of the code search as they are
-- (00116: pg_trgm GIN indexes on the lowercased content and path); this
-- number's SQLite twin, 00183_code_search_one_text_index.sqlite.sql,
-- puts content and path in one FTS5 table. Nothing to do here.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
