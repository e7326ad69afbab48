-- PostgreSQL's text indexes of the issue search: pg_trgm GIN indexes on
-- issues' lowercased titles and bodies, which serve lower(column) LIKE
-- '%words%'. The SQLite twin is 00117_issue_search_text.sqlite.sql; the
-- extension is made by 00116 (public, under an advisory lock).

-- +goose Up
CREATE INDEX issues_title_trgm ON issues USING gin (lower(title) public.gin_trgm_ops);
CREATE INDEX issues_body_trgm ON issues USING gin (lower(body) public.gin_trgm_ops);

-- +goose Down
DROP INDEX issues_body_trgm;
DROP INDEX issues_title_trgm;
