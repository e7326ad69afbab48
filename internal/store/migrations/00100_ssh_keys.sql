-- SSH keys (issue 50): a user's keys (user_id set) and a repository's
-- deploy keys (repository_id set), one table because a key is in use
-- once, by anyone: the fingerprint (SHA256, as ssh-keygen -l prints it)
-- is unique, and the SSH server finds a connection's key by it in one
-- query. key_text is the key as OpenSSH writes it without its comment.

-- +goose Up
CREATE TABLE ssh_keys (
    id            {{id}},
    user_id       BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    repository_id BIGINT REFERENCES repositories (id) ON DELETE CASCADE,
    title         TEXT NOT NULL,
    key_text      TEXT NOT NULL,
    fingerprint   TEXT NOT NULL,
    read_only     BOOLEAN NOT NULL DEFAULT TRUE,
    added_by      TEXT,
    created_at    {{time}} NOT NULL,
    last_used_at  {{time}}
);
CREATE UNIQUE INDEX ssh_keys_fingerprint ON ssh_keys (fingerprint);
CREATE INDEX ssh_keys_user ON ssh_keys (user_id, id);
CREATE INDEX ssh_keys_repository ON ssh_keys (repository_id, id);

-- +goose Down
DROP TABLE ssh_keys;
