-- A repository's open issues and pull requests and the size of its git
-- data: the PostgreSQL twin of
-- 00052_repository_open_issues_size.sqlite.sql, which says why and how.
-- count_repository (00044) learns the open_issues count.

-- +goose Up
ALTER TABLE repository_counts ADD COLUMN open_issues BIGINT NOT NULL DEFAULT 0;
ALTER TABLE repository_counts ADD COLUMN size_kb BIGINT DEFAULT 0;
INSERT INTO repository_counts (repository_id) SELECT id FROM repositories
WHERE id NOT IN (SELECT repository_id FROM repository_counts);
UPDATE repository_counts SET size_kb = NULL,
    open_issues = (SELECT count(*) FROM issues i WHERE i.repository_id = repository_counts.repository_id AND i.state = 'open');
CREATE INDEX repository_counts_unmeasured ON repository_counts (repository_id) WHERE size_kb IS NULL;

-- +goose StatementBegin
-- count_repository adds delta to one count of a repository (see 00044),
-- open_issues now among them.
CREATE OR REPLACE FUNCTION count_repository(repo BIGINT, what TEXT, delta BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF repo IS NULL OR (delta < 0 AND NOT EXISTS (SELECT 1 FROM repositories WHERE id = repo)) THEN
        RETURN;
    END IF;
    IF delta > 0 THEN
        INSERT INTO repository_counts AS c (repository_id, stars, subscribers, forks, open_issues)
        VALUES (repo, CASE WHEN what = 'stars' THEN delta ELSE 0 END,
                CASE WHEN what = 'subscribers' THEN delta ELSE 0 END, CASE WHEN what = 'forks' THEN delta ELSE 0 END,
                CASE WHEN what = 'open_issues' THEN delta ELSE 0 END)
        ON CONFLICT (repository_id) DO UPDATE SET stars = c.stars + EXCLUDED.stars,
            subscribers = c.subscribers + EXCLUDED.subscribers, forks = c.forks + EXCLUDED.forks,
            open_issues = c.open_issues + EXCLUDED.open_issues;
    ELSE
        UPDATE repository_counts SET stars = stars + CASE WHEN what = 'stars' THEN delta ELSE 0 END,
            subscribers = subscribers + CASE WHEN what = 'subscribers' THEN delta ELSE 0 END,
            forks = forks + CASE WHEN what = 'forks' THEN delta ELSE 0 END,
            open_issues = open_issues + CASE WHEN what = 'open_issues' THEN delta ELSE 0 END
        WHERE repository_id = repo;
    END IF;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION count_open_issues() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND OLD.state = 'open' THEN
        PERFORM count_repository(OLD.repository_id, 'open_issues', -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NEW.state = 'open' THEN
        PERFORM count_repository(NEW.repository_id, 'open_issues', 1);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER issues_count_insert AFTER INSERT ON issues
    FOR EACH ROW WHEN (NEW.state = 'open') EXECUTE FUNCTION count_open_issues();
CREATE TRIGGER issues_count_delete AFTER DELETE ON issues
    FOR EACH ROW WHEN (OLD.state = 'open') EXECUTE FUNCTION count_open_issues();
CREATE TRIGGER issues_count_update AFTER UPDATE OF state, repository_id ON issues
    FOR EACH ROW WHEN ((OLD.state = 'open' OR NEW.state = 'open')
        AND (OLD.state IS DISTINCT FROM NEW.state OR OLD.repository_id IS DISTINCT FROM NEW.repository_id))
    EXECUTE FUNCTION count_open_issues();

-- +goose Down
DROP TRIGGER issues_count_update ON issues;
DROP TRIGGER issues_count_delete ON issues;
DROP TRIGGER issues_count_insert ON issues;
DROP FUNCTION count_open_issues();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION count_repository(repo BIGINT, what TEXT, delta BIGINT) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF repo IS NULL OR (delta < 0 AND NOT EXISTS (SELECT 1 FROM repositories WHERE id = repo)) THEN
        RETURN;
    END IF;
    IF delta > 0 THEN
        INSERT INTO repository_counts AS c (repository_id, stars, subscribers, forks)
        VALUES (repo, CASE WHEN what = 'stars' THEN delta ELSE 0 END,
                CASE WHEN what = 'subscribers' THEN delta ELSE 0 END, CASE WHEN what = 'forks' THEN delta ELSE 0 END)
        ON CONFLICT (repository_id) DO UPDATE SET stars = c.stars + EXCLUDED.stars,
            subscribers = c.subscribers + EXCLUDED.subscribers, forks = c.forks + EXCLUDED.forks;
    ELSE
        UPDATE repository_counts SET stars = stars + CASE WHEN what = 'stars' THEN delta ELSE 0 END,
            subscribers = subscribers + CASE WHEN what = 'subscribers' THEN delta ELSE 0 END,
            forks = forks + CASE WHEN what = 'forks' THEN delta ELSE 0 END
        WHERE repository_id = repo;
    END IF;
END $$;
-- +goose StatementEnd
DROP INDEX repository_counts_unmeasured;
ALTER TABLE repository_counts DROP COLUMN size_kb;
ALTER TABLE repository_counts DROP COLUMN open_issues;
