-- An account's followers, the accounts it follows and its public and
-- private repositories, counted as they change instead of on every read
-- of GET /user and GET /users/{username} (whose cached answers every
-- write to repositories or follows drops): counting 200,000 followers
-- took milliseconds a read. Triggers keep them, cascades included, as
-- repository_counts (00044) does. An account without a row has none.
-- The PostgreSQL twin of this file is 00045_account_counts.postgres.sql.

-- +goose Up
CREATE TABLE account_counts (
    account_id    BIGINT PRIMARY KEY REFERENCES accounts (id) ON DELETE CASCADE,
    followers     BIGINT NOT NULL DEFAULT 0,
    following     BIGINT NOT NULL DEFAULT 0,
    public_repos  BIGINT NOT NULL DEFAULT 0,
    private_repos BIGINT NOT NULL DEFAULT 0
);
INSERT INTO account_counts (account_id, followers, following, public_repos, private_repos)
SELECT a.id,
       (SELECT count(*) FROM follows f WHERE f.followee_id = a.id),
       (SELECT count(*) FROM follows f WHERE f.follower_id = a.id),
       (SELECT count(*) FROM repositories r WHERE r.owner_id = a.id AND NOT r.private),
       (SELECT count(*) FROM repositories r WHERE r.owner_id = a.id AND r.private)
FROM accounts a;

-- +goose StatementBegin
CREATE TRIGGER follows_count_insert AFTER INSERT ON follows BEGIN
    INSERT INTO account_counts (account_id, followers) VALUES (NEW.followee_id, 1)
    ON CONFLICT (account_id) DO UPDATE SET followers = followers + 1;
    INSERT INTO account_counts (account_id, following) VALUES (NEW.follower_id, 1)
    ON CONFLICT (account_id) DO UPDATE SET following = following + 1;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER follows_count_delete AFTER DELETE ON follows BEGIN
    UPDATE account_counts SET followers = followers - 1 WHERE account_id = OLD.followee_id;
    UPDATE account_counts SET following = following - 1 WHERE account_id = OLD.follower_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER owned_repos_count_insert AFTER INSERT ON repositories BEGIN
    INSERT INTO account_counts (account_id, public_repos, private_repos)
    VALUES (NEW.owner_id, CASE WHEN NEW.private THEN 0 ELSE 1 END, CASE WHEN NEW.private THEN 1 ELSE 0 END)
    ON CONFLICT (account_id) DO UPDATE SET public_repos = public_repos + excluded.public_repos,
        private_repos = private_repos + excluded.private_repos;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER owned_repos_count_delete AFTER DELETE ON repositories BEGIN
    UPDATE account_counts SET public_repos = public_repos - CASE WHEN OLD.private THEN 0 ELSE 1 END,
        private_repos = private_repos - CASE WHEN OLD.private THEN 1 ELSE 0 END
    WHERE account_id = OLD.owner_id;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER owned_repos_count_update AFTER UPDATE OF owner_id, private ON repositories
WHEN OLD.owner_id IS NOT NEW.owner_id OR OLD.private IS NOT NEW.private BEGIN
    UPDATE account_counts SET public_repos = public_repos - CASE WHEN OLD.private THEN 0 ELSE 1 END,
        private_repos = private_repos - CASE WHEN OLD.private THEN 1 ELSE 0 END
    WHERE account_id = OLD.owner_id;
    INSERT INTO account_counts (account_id, public_repos, private_repos)
    VALUES (NEW.owner_id, CASE WHEN NEW.private THEN 0 ELSE 1 END, CASE WHEN NEW.private THEN 1 ELSE 0 END)
    ON CONFLICT (account_id) DO UPDATE SET public_repos = public_repos + excluded.public_repos,
        private_repos = private_repos + excluded.private_repos;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER owned_repos_count_update;
DROP TRIGGER owned_repos_count_delete;
DROP TRIGGER owned_repos_count_insert;
DROP TRIGGER follows_count_delete;
DROP TRIGGER follows_count_insert;
DROP TABLE account_counts;
