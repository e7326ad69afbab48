-- SQLite's text indexes of code_files' content and code_commits'
-- messages: FTS5 with the trigram tokenizer (substrings of three
-- characters and more match, case folded), external-content tables kept
-- by triggers. The PostgreSQL twin is 00116_code_search_text.postgres.sql.

-- +goose Up
CREATE VIRTUAL TABLE code_files_fts USING fts5(content, content='code_files', content_rowid='id', tokenize='trigram');
-- +goose StatementBegin
CREATE TRIGGER code_files_fts_insert AFTER INSERT ON code_files BEGIN
    INSERT INTO code_files_fts (rowid, content) VALUES (NEW.id, NEW.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER code_files_fts_delete AFTER DELETE ON code_files BEGIN
    INSERT INTO code_files_fts (code_files_fts, rowid, content) VALUES ('delete', OLD.id, OLD.content);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER code_files_fts_update AFTER UPDATE ON code_files BEGIN
    INSERT INTO code_files_fts (code_files_fts, rowid, content) VALUES ('delete', OLD.id, OLD.content);
    INSERT INTO code_files_fts (rowid, content) VALUES (NEW.id, NEW.content);
END;
-- +goose StatementEnd

CREATE VIRTUAL TABLE code_commits_fts USING fts5(message, content='code_commits', content_rowid='id', tokenize='trigram');
-- +goose StatementBegin
CREATE TRIGGER code_commits_fts_insert AFTER INSERT ON code_commits BEGIN
    INSERT INTO code_commits_fts (rowid, message) VALUES (NEW.id, NEW.message);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER code_commits_fts_delete AFTER DELETE ON code_commits BEGIN
    INSERT INTO code_commits_fts (code_commits_fts, rowid, message) VALUES ('delete', OLD.id, OLD.message);
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER code_commits_fts_update AFTER UPDATE ON code_commits BEGIN
    INSERT INTO code_commits_fts (code_commits_fts, rowid, message) VALUES ('delete', OLD.id, OLD.message);
    INSERT INTO code_commits_fts (rowid, message) VALUES (NEW.id, NEW.message);
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER code_commits_fts_update;
DROP TRIGGER code_commits_fts_delete;
DROP TRIGGER code_commits_fts_insert;
DROP TABLE code_commits_fts;
DROP TRIGGER code_files_fts_update;
DROP TRIGGER code_files_fts_delete;
DROP TRIGGER code_files_fts_insert;
DROP TABLE code_files_fts;
