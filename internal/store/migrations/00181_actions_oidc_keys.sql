-- The RS256 key pair that signs the OIDC tokens of Actions jobs (issue
-- 51): the private key sealed at rest (secretbox), the key id its JWKS
-- names. The newest row signs; older ones stay published until removed.
-- Runners of an enterprise (generate-jitconfig of an enterprise): scope
-- 'enterprise', removed with their enterprise.

-- +goose Up
CREATE TABLE actions_oidc_keys (
    id          {{id}},
    kid         TEXT NOT NULL UNIQUE,
    private_key TEXT NOT NULL,
    created_at  {{time}} NOT NULL
);

ALTER TABLE runners ADD COLUMN enterprise_id BIGINT REFERENCES enterprises (id) ON DELETE CASCADE;

-- +goose Down
ALTER TABLE runners DROP COLUMN enterprise_id;
DROP TABLE actions_oidc_keys;
