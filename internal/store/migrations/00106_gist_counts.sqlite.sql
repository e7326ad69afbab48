-- An account's public and private gists, counted as they are created and
-- deleted (a gist never changes visibility or owner), beside its
-- repositories in account_counts (00045): the user object's public_gists
-- and private_gists. The PostgreSQL twin of this file is
-- 00106_gist_counts.postgres.sql.

-- +goose Up
ALTER TABLE account_counts ADD COLUMN public_gists BIGINT NOT NULL DEFAULT 0;
ALTER TABLE account_counts ADD COLUMN private_gists BIGINT NOT NULL DEFAULT 0;
INSERT INTO account_counts (account_id, public_gists, private_gists)
SELECT owner_id, SUM(CASE WHEN public THEN 1 ELSE 0 END), SUM(CASE WHEN public THEN 0 ELSE 1 END)
FROM gists WHERE true GROUP BY owner_id
ON CONFLICT (account_id) DO UPDATE SET public_gists = excluded.public_gists, private_gists = excluded.private_gists;

-- +goose StatementBegin
CREATE TRIGGER owned_gists_count_insert AFTER INSERT ON gists BEGIN
    INSERT INTO account_counts (account_id, public_gists, private_gists)
    VALUES (NEW.owner_id, CASE WHEN NEW.public THEN 1 ELSE 0 END, CASE WHEN NEW.public THEN 0 ELSE 1 END)
    ON CONFLICT (account_id) DO UPDATE SET public_gists = public_gists + excluded.public_gists,
        private_gists = private_gists + excluded.private_gists;
END;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE TRIGGER owned_gists_count_delete AFTER DELETE ON gists BEGIN
    UPDATE account_counts SET public_gists = public_gists - CASE WHEN OLD.public THEN 1 ELSE 0 END,
        private_gists = private_gists - CASE WHEN OLD.public THEN 0 ELSE 1 END
    WHERE account_id = OLD.owner_id;
END;
-- +goose StatementEnd

-- +goose Down
DROP TRIGGER owned_gists_count_delete;
DROP TRIGGER owned_gists_count_insert;
ALTER TABLE account_counts DROP COLUMN private_gists;
ALTER TABLE account_counts DROP COLUMN public_gists;
