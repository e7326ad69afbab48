-- SQLite's text indexes of the issue search: FTS5 tables with the
-- trigram tokenizer over issues' titles and bodies (substrings of three
-- characters and more match, case folded), external-content tables kept
-- by triggers in the change's transaction. The PostgreSQL twin is
-- 00117_issue_search_text.postgres.sql.

-- +goose Up
CREATE VIRTUAL TABLE issues_title_fts USING fts5(title, content='issues', content_rowid='id', tokenize='trigram');
CREATE VIRTUAL TABLE issues_body_fts USING fts5(body, content='issues', content_rowid='id', tokenize='trigram');
INSERT INTO issues_title_fts (issues_title_fts) VALUES ('rebuild');
INSERT INTO issues_body_fts (issues_body_fts) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER issues_fts_insert AFTER INSERT ON issues BEGIN
    INSERT INTO issues_title_fts (rowid, title) VALUES (NEW.id, NEW.title);
    INSERT INTO issues_body_fts (rowid, body) VALUES (NEW.id, NEW.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER issues_fts_delete AFTER DELETE ON issues BEGIN
    INSERT INTO issues_title_fts (issues_title_fts, rowid, title) VALUES ('delete', OLD.id, OLD.title);
    INSERT INTO issues_body_fts (issues_body_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER issues_fts_title_update AFTER UPDATE OF title ON issues BEGIN
    INSERT INTO issues_title_fts (issues_title_fts, rowid, title) VALUES ('delete', OLD.id, OLD.title);
    INSERT INTO issues_title_fts (rowid, title) VALUES (NEW.id, NEW.title);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER issues_fts_body_update AFTER UPDATE OF body ON issues BEGIN
    INSERT INTO issues_body_fts (issues_body_fts, rowid, body) VALUES ('delete', OLD.id, OLD.body);
    INSERT INTO issues_body_fts (rowid, body) VALUES (NEW.id, NEW.body);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER issues_fts_body_update;
DROP TRIGGER issues_fts_title_update;
DROP TRIGGER issues_fts_delete;
DROP TRIGGER issues_fts_insert;
DROP TABLE issues_body_fts;
DROP TABLE issues_title_fts;
