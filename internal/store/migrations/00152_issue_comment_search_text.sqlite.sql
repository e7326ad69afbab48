-- SQLite's text index of issue comments for the issue search's
-- in:comments: an FTS5 table with the trigram tokenizer over
-- issue_comments' bodies (substrings of three characters and more match,
-- case folded), external content kept by triggers in the change's
-- transaction, as 00117 does for issues. The PostgreSQL twin is
-- 00152_issue_comment_search_text.postgres.sql.

-- +goose Up
CREATE VIRTUAL TABLE issue_comments_fts USING fts5(body, content='issue_comments', content_rowid='id', tokenize='trigram');
INSERT INTO issue_comments_fts (issue_comments_fts) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER issue_comments_fts_insert AFTER INSERT ON issue_comments BEGIN
    INSERT INTO issue_comments_fts (rowid, body) VALUES (NEW.id, NEW.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER issue_comments_fts_delete AFTER DELETE ON issue_comments BEGIN
    INSERT INTO issue_comments_fts (issue_comments_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER issue_comments_fts_update AFTER UPDATE OF body ON issue_comments BEGIN
    INSERT INTO issue_comments_fts (issue_comments_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
    INSERT INTO issue_comments_fts (rowid, body) VALUES (NEW.id, NEW.body);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER issue_comments_fts_update;
DROP TRIGGER issue_comments_fts_delete;
DROP TRIGGER issue_comments_fts_insert;
DROP TABLE issue_comments_fts;
