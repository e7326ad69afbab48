-- PostgreSQL's twin, 00184_issue_search_folded_text.postgres.sql, stores
-- issues' titles and bodies lowercased for its issue search; SQLite
-- searches through its FTS5 table (00173). Nothing to do here.

-- +goose Up
SELECT 1;

-- +goose Down
SELECT 1;
