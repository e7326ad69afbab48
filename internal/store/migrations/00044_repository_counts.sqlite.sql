-- A repository's stargazers, watchers (subscriptions not ignored) and
-- forks, counted as they change instead of on every read: a repository
-- event's payload (rendered in the event's transaction, under SQLite's
-- one write lock), a pull request's and a team's repository JSON count
-- them, and counting 200,000 stars took 15 ms an event. Triggers keep
-- them, so that every write counts, the cascades of an account's or a
-- repository's deletion included. A repository without a row has none.
-- The PostgreSQL twin of this file is 00044_repository_counts.postgres.sql.

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
CREATE TRIGGER stars_count_insert AFTER INSERT ON stars BEGIN
    INSERT INTO repository_counts (repository_id, stars) VALUES (NEW.repository_id, 1)
    ON CONFLICT (repository_id) DO UPDATE SET stars = stars + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER stars_count_delete AFTER DELETE ON stars BEGIN
    UPDATE repository_counts SET stars = stars - 1 WHERE repository_id = OLD.repository_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER subscriptions_count_insert AFTER INSERT ON subscriptions WHEN NOT NEW.ignored BEGIN
    INSERT INTO repository_counts (repository_id, subscribers) VALUES (NEW.repository_id, 1)
    ON CONFLICT (repository_id) DO UPDATE SET subscribers = subscribers + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER subscriptions_count_delete AFTER DELETE ON subscriptions WHEN NOT OLD.ignored BEGIN
    UPDATE repository_counts SET subscribers = subscribers - 1 WHERE repository_id = OLD.repository_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER subscriptions_count_unignore AFTER UPDATE OF ignored ON subscriptions WHEN OLD.ignored AND NOT NEW.ignored BEGIN
    INSERT INTO repository_counts (repository_id, subscribers) VALUES (NEW.repository_id, 1)
    ON CONFLICT (repository_id) DO UPDATE SET subscribers = subscribers + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER subscriptions_count_ignore AFTER UPDATE OF ignored ON subscriptions WHEN NOT OLD.ignored AND NEW.ignored BEGIN
    UPDATE repository_counts SET subscribers = subscribers - 1 WHERE repository_id = OLD.repository_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER forks_count_insert AFTER INSERT ON repositories WHEN NEW.fork_of_id IS NOT NULL BEGIN
    INSERT INTO repository_counts (repository_id, forks) VALUES (NEW.fork_of_id, 1)
    ON CONFLICT (repository_id) DO UPDATE SET forks = forks + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER forks_count_delete AFTER DELETE ON repositories WHEN OLD.fork_of_id IS NOT NULL BEGIN
    UPDATE repository_counts SET forks = forks - 1 WHERE repository_id = OLD.fork_of_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER forks_count_update AFTER UPDATE OF fork_of_id ON repositories WHEN OLD.fork_of_id IS NOT NEW.fork_of_id BEGIN
    UPDATE repository_counts SET forks = forks - 1 WHERE repository_id = OLD.fork_of_id;
    INSERT INTO repository_counts (repository_id, forks) SELECT NEW.fork_of_id, 1 WHERE NEW.fork_of_id IS NOT NULL
    ON CONFLICT (repository_id) DO UPDATE SET forks = forks + 1;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER forks_count_update;
DROP TRIGGER forks_count_delete;
DROP TRIGGER forks_count_insert;
DROP TRIGGER subscriptions_count_ignore;
DROP TRIGGER subscriptions_count_unignore;
DROP TRIGGER subscriptions_count_delete;
DROP TRIGGER subscriptions_count_insert;
DROP TRIGGER stars_count_delete;
DROP TRIGGER stars_count_insert;
DROP TABLE repository_counts;
