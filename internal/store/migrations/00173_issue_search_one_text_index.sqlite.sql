-- SQLite's text index of the issue search becomes one FTS5 table over
-- issues' titles and bodies (trigram tokenizer, external content kept by
-- triggers in the change's transaction), replacing 00117's table per
-- column. One MATCH expression (column filters for in:title or in:body,
-- every word of a search at once) can then drive a search: the index
-- yields the matching rowids newest first and the query stops at its
-- limit, where an IN (... MATCH ...) per column built every match's id
-- first (a word in 100,000 of 1,000,000 issues: a second). The
-- PostgreSQL twin is 00173_issue_search_one_text_index.postgres.sql.

-- +goose Up
DROP TRIGGER issues_fts_body_update;
DROP TRIGGER issues_fts_title_update;
DROP TRIGGER issues_fts_delete;
DROP TRIGGER issues_fts_insert;
DROP TABLE issues_body_fts;
DROP TABLE issues_title_fts;
CREATE VIRTUAL TABLE issues_fts USING fts5(title, body, content='issues', content_rowid='id', tokenize='trigram');
INSERT INTO issues_fts (issues_fts) VALUES ('rebuild');
-- +goose StatementBegin
CREATE TRIGGER issues_fts_insert AFTER INSERT ON issues BEGIN
    INSERT INTO issues_fts (rowid, title, body) VALUES (NEW.id, NEW.title, NEW.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER issues_fts_delete AFTER DELETE ON issues BEGIN
    INSERT INTO issues_fts (issues_fts, rowid, title, body) VALUES ('delete', OLD.id, OLD.title, OLD.body);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER issues_fts_update AFTER UPDATE OF title, body ON issues BEGIN
    INSERT INTO issues_fts (issues_fts, rowid, title, body) VALUES ('delete', OLD.id, OLD.title, OLD.body);
    INSERT INTO issues_fts (rowid, title, body) VALUES (NEW.id, NEW.title, NEW.body);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER issues_fts_update;
DROP TRIGGER issues_fts_delete;
DROP TRIGGER issues_fts_insert;
DROP TABLE issues_fts;
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
