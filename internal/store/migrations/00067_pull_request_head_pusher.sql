-- Who pushed a pull request's head last (the pusher of its latest
-- synchronize; NULL until a push moved it, when the author counts as its
-- pusher): branch protection's require_last_push_approval wants an
-- approval of the head by someone else (internal/pulls, protect.go).

-- +goose Up
ALTER TABLE pull_requests ADD COLUMN head_pusher_id BIGINT REFERENCES accounts (id) ON DELETE SET NULL;

-- +goose Down
ALTER TABLE pull_requests DROP COLUMN head_pusher_id;
