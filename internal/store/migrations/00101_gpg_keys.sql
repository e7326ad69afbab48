-- GPG keys (issue 50): a user's OpenPGP public keys, as POST
-- /user/gpg_keys parsed them. A primary key has raw_key (the armored
-- text the user sent) and its subkeys point at it through
-- primary_key_id; emails are the primary key's identities' addresses,
-- one a line. A key id is in use once, by anyone.

-- +goose Up
CREATE TABLE gpg_keys (
    id                  {{id}},
    user_id             BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    primary_key_id      BIGINT REFERENCES gpg_keys (id) ON DELETE CASCADE,
    name                TEXT,
    key_id              TEXT NOT NULL,
    public_key          TEXT NOT NULL,
    raw_key             TEXT,
    emails              TEXT NOT NULL DEFAULT '',
    can_sign            BOOLEAN NOT NULL,
    can_encrypt_comms   BOOLEAN NOT NULL,
    can_encrypt_storage BOOLEAN NOT NULL,
    can_certify         BOOLEAN NOT NULL,
    revoked             BOOLEAN NOT NULL,
    key_created_at      {{time}} NOT NULL,
    expires_at          {{time}},
    created_at          {{time}} NOT NULL
);
CREATE UNIQUE INDEX gpg_keys_key_id ON gpg_keys (key_id);
CREATE INDEX gpg_keys_user ON gpg_keys (user_id, id);
CREATE INDEX gpg_keys_primary ON gpg_keys (primary_key_id);

-- +goose Down
DROP TABLE gpg_keys;
