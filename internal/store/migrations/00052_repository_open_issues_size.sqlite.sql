-- A repository's open issues and pull requests (open_issues_count, which
-- on the platform counts both) and the size of its git data in KB,
-- kept in repository_counts (00044) beside its stars, watchers and forks.
-- Triggers count the issue rows (a pull request is one, is_pull_request)
-- whose state is open as they are added, closed, reopened, moved to
-- another repository or deleted, cascades included. size_kb is written
-- by the code that changes the git data (recording a push, creating a
-- fork, git maintenance): it is git count-objects' size plus size-pack,
-- measured in the transaction that records the change; NULL, for the
-- repositories that were there before this migration, until git
-- maintenance first measures them (the partial index finds them); new
-- rows start at 0, a new repository's size.
-- The PostgreSQL twin of this file is
-- 00052_repository_open_issues_size.postgres.sql.

-- +goose Up
ALTER TABLE repository_counts ADD COLUMN open_issues BIGINT NOT NULL DEFAULT 0;
ALTER TABLE repository_counts ADD COLUMN size_kb BIGINT DEFAULT 0;
INSERT INTO repository_counts (repository_id) SELECT id FROM repositories
WHERE id NOT IN (SELECT repository_id FROM repository_counts);
UPDATE repository_counts SET size_kb = NULL,
    open_issues = (SELECT count(*) FROM issues i WHERE i.repository_id = repository_counts.repository_id AND i.state = 'open');
CREATE INDEX repository_counts_unmeasured ON repository_counts (repository_id) WHERE size_kb IS NULL;

-- +goose StatementBegin
CREATE TRIGGER issues_count_insert AFTER INSERT ON issues WHEN NEW.state = 'open' BEGIN
    INSERT INTO repository_counts (repository_id, open_issues) VALUES (NEW.repository_id, 1)
    ON CONFLICT (repository_id) DO UPDATE SET open_issues = open_issues + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER issues_count_delete AFTER DELETE ON issues WHEN OLD.state = 'open' BEGIN
    UPDATE repository_counts SET open_issues = open_issues - 1 WHERE repository_id = OLD.repository_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER issues_count_update AFTER UPDATE OF state, repository_id ON issues
WHEN (OLD.state = 'open' OR NEW.state = 'open')
    AND (OLD.state IS NOT NEW.state OR OLD.repository_id IS NOT NEW.repository_id) BEGIN
    UPDATE repository_counts SET open_issues = open_issues - 1
    WHERE repository_id = OLD.repository_id AND OLD.state = 'open';
    INSERT INTO repository_counts (repository_id, open_issues) SELECT NEW.repository_id, 1 WHERE NEW.state = 'open'
    ON CONFLICT (repository_id) DO UPDATE SET open_issues = open_issues + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER issues_count_update;
DROP TRIGGER issues_count_delete;
DROP TRIGGER issues_count_insert;
DROP INDEX repository_counts_unmeasured;
ALTER TABLE repository_counts DROP COLUMN size_kb;
ALTER TABLE repository_counts DROP COLUMN open_issues;
