-- The push's name in git's reflogs: receive-pack writes every reference
-- update it applies with push_key as the committer email, so the push
-- recovery tells the updates a push applied from the reflog. '' for rows
-- logged before reflogs named pushes (the recovery falls back to the
-- references' current values and the later logged updates). Each
-- element of updates may also carry log_start: the first line of the
-- reference's reflog before the push.

-- +goose Up
ALTER TABLE push_log ADD COLUMN push_key TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE push_log DROP COLUMN push_key;
