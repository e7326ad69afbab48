-- An account's followers, follows and public and private repositories,
-- counted as they change: the PostgreSQL twin of
-- 00045_account_counts.sqlite.sql, which says why.

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
-- count_account adds the deltas to an account's counts (a row is made by
-- the first addition). Subtractions for an account that is gone are
-- skipped, as count_repository (00044) does, and for the same reason.
CREATE FUNCTION count_account(acct BIGINT, followers_d BIGINT, following_d BIGINT, public_d BIGINT, private_d BIGINT)
RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    IF followers_d + following_d + public_d + private_d < 0 AND NOT EXISTS (SELECT 1 FROM accounts WHERE id = acct) THEN
        RETURN;
    END IF;
    INSERT INTO account_counts AS c (account_id, followers, following, public_repos, private_repos)
    VALUES (acct, followers_d, following_d, public_d, private_d)
    ON CONFLICT (account_id) DO UPDATE SET followers = c.followers + EXCLUDED.followers,
        following = c.following + EXCLUDED.following, public_repos = c.public_repos + EXCLUDED.public_repos,
        private_repos = c.private_repos + EXCLUDED.private_repos;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION count_follows() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM count_account(NEW.followee_id, 1, 0, 0, 0);
        PERFORM count_account(NEW.follower_id, 0, 1, 0, 0);
    ELSE
        PERFORM count_account(OLD.followee_id, -1, 0, 0, 0);
        PERFORM count_account(OLD.follower_id, 0, -1, 0, 0);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION count_owned_repos() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP IN ('DELETE', 'UPDATE') THEN
        PERFORM count_account(OLD.owner_id, 0, 0, CASE WHEN OLD.private THEN 0 ELSE -1 END, CASE WHEN OLD.private THEN -1 ELSE 0 END);
    END IF;
    IF TG_OP IN ('INSERT', 'UPDATE') THEN
        PERFORM count_account(NEW.owner_id, 0, 0, CASE WHEN NEW.private THEN 0 ELSE 1 END, CASE WHEN NEW.private THEN 1 ELSE 0 END);
    END IF;
    RETURN NULL;
END $$;
-- +goose StatementEnd
CREATE TRIGGER follows_count AFTER INSERT OR DELETE ON follows FOR EACH ROW EXECUTE FUNCTION count_follows();
CREATE TRIGGER owned_repos_count AFTER INSERT OR DELETE ON repositories FOR EACH ROW EXECUTE FUNCTION count_owned_repos();
CREATE TRIGGER owned_repos_count_update AFTER UPDATE OF owner_id, private ON repositories
    FOR EACH ROW WHEN (OLD.owner_id IS DISTINCT FROM NEW.owner_id OR OLD.private IS DISTINCT FROM NEW.private)
    EXECUTE FUNCTION count_owned_repos();

-- +goose Down
DROP TRIGGER owned_repos_count_update ON repositories;
DROP TRIGGER owned_repos_count ON repositories;
DROP TRIGGER follows_count ON follows;
DROP FUNCTION count_owned_repos();
DROP FUNCTION count_follows();
DROP FUNCTION count_account(BIGINT, BIGINT, BIGINT, BIGINT, BIGINT);
DROP TABLE account_counts;
