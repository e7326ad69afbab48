-- Blocked users (PUT /user/blocks/{username}, PUT /orgs/{org}/blocks/{username}):
-- a user blocked by an account cannot star, watch or follow it or its
-- repositories, nor be invited to it when it is an organization.

-- +goose Up
CREATE TABLE blocks (
    blocker_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    blocked_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at {{time}} NOT NULL,
    PRIMARY KEY (blocker_id, blocked_id)
);
CREATE INDEX blocks_blocked ON blocks (blocked_id);

-- +goose Down
DROP TABLE blocks;
