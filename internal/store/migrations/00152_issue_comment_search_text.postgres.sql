-- PostgreSQL's text index of issue comments for the issue search's
-- in:comments: a pg_trgm GIN index on the lowercased body, which serves
-- lower(body) LIKE '%words%' (the extension is made by 00116). The SQLite
-- twin is 00152_issue_comment_search_text.sqlite.sql.

-- +goose Up
CREATE INDEX issue_comments_body_trgm ON issue_comments USING gin (lower(body) public.gin_trgm_ops);

-- +goose Down
DROP INDEX issue_comments_body_trgm;
