-- A repository's stargazers, watchers and forks, counted as they change:
-- the PostgreSQL twin of 00044_repository_counts.sqlite.sql, which says
-- why. The triggers' bodies are functions here.

-- +goose Up
CREATE TABLE repository_counts (
    repository_id BIGINT PRIMARY KEY REFERENCES repositories (id) ON DELETE CASCADE,
    stars         BIGINT NOT NULL DEFAULT 0,
    subscribers   BIGINT NOT NULL DEFAULT 0,
    forks         BIGINT NOT NULL DEFAULT 0
);
INSERT INTO repository_counts (repository_id, stars, subscribers, forks)
SELECT r.id,
       (SELECT count(*) FROM stars s WHERE s.repository_id = r.id),
       (SELECT count(*) FROM subscriptions w WHERE w.repository_id = r.id AND NOT w.ignored),
       (SELECT count(*) FROM repositories f WHERE f.fork_of_id = r.id)
FROM repositories r;

-- +goose StatementBegin
-- count_repository adds delta to one count of a repository (a row is
-- made by the first addition). A subtraction for a repository that is
-- gone is skipped: the cascades of its deletion (its stars, its
-- subscriptions, its forks' fork_of_id) would otherwise update its row
-- once per row they touch, each update in one transaction slower than
-- the last (every version of the row stays until the commit).
CREATE FUNCTION count_repository(repo BIGINT, what TEXT, delta BIGINT) RETURNS void LANGUAGE plpgsql AS $$
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
-- +goose StatementBegin
CREATE FUNCTION count_stars() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM count_repository(NEW.repository_id, 'stars', 1);
    ELSE
        PERFORM count_repository(OLD.repository_id, 'stars', -1);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION count_subscribers() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') AND NOT OLD.ignored THEN
        PERFORM count_repository(OLD.repository_id, 'subscribers', -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') AND NOT NEW.ignored THEN
        PERFORM count_repository(NEW.repository_id, 'subscribers', 1);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION count_forks() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM count_repository(OLD.fork_of_id, 'forks', -1);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM count_repository(NEW.fork_of_id, 'forks', 1);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER stars_count AFTER INSERT OR DELETE ON stars FOR EACH ROW EXECUTE FUNCTION count_stars();
CREATE TRIGGER subscriptions_count AFTER INSERT OR DELETE OR UPDATE OF ignored ON subscriptions
    FOR EACH ROW EXECUTE FUNCTION count_subscribers();
CREATE TRIGGER forks_count_insert AFTER INSERT ON repositories
    FOR EACH ROW WHEN (NEW.fork_of_id IS NOT NULL) EXECUTE FUNCTION count_forks();
CREATE TRIGGER forks_count_delete AFTER DELETE ON repositories
    FOR EACH ROW WHEN (OLD.fork_of_id IS NOT NULL) EXECUTE FUNCTION count_forks();
CREATE TRIGGER forks_count_update AFTER UPDATE OF fork_of_id ON repositories
    FOR EACH ROW WHEN (OLD.fork_of_id IS DISTINCT FROM NEW.fork_of_id) EXECUTE FUNCTION count_forks();

-- +goose Down
DROP TRIGGER forks_count_update ON repositories;
DROP TRIGGER forks_count_delete ON repositories;
DROP TRIGGER forks_count_insert ON repositories;
DROP TRIGGER subscriptions_count ON subscriptions;
DROP TRIGGER stars_count ON stars;
DROP FUNCTION count_forks();
DROP FUNCTION count_subscribers();
DROP FUNCTION count_stars();
DROP FUNCTION count_repository(BIGINT, TEXT, BIGINT);
DROP TABLE repository_counts;
