-- SSH signing keys (issue 50): the SSH keys a user signs commits and
-- tags with, apart from the keys that authenticate (the same key may be
-- both). A key signs for one account: the fingerprint is unique.

-- +goose Up
CREATE TABLE ssh_signing_keys (
    id          {{id}},
    user_id     BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    title       TEXT NOT NULL,
    key_text    TEXT NOT NULL,
    fingerprint TEXT NOT NULL,
    created_at  {{time}} NOT NULL
);
CREATE UNIQUE INDEX ssh_signing_keys_fingerprint ON ssh_signing_keys (fingerprint);
CREATE INDEX ssh_signing_keys_user ON ssh_signing_keys (user_id, id);

-- +goose Down
DROP TABLE ssh_signing_keys;
