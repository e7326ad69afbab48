-- Web-flow keys (issue 50): the public keys the servers sign the commits
-- they write themselves with (merges, the contents API), as the platform
-- signs its web-flow commits. Each server's key is made under its data
-- directory; its public half is here so that every server sharing the
-- database verifies every server's commits.

-- +goose Up
CREATE TABLE web_flow_keys (
    fingerprint TEXT NOT NULL PRIMARY KEY,
    key_text    TEXT NOT NULL,
    created_at  {{time}} NOT NULL
);

-- +goose Down
DROP TABLE web_flow_keys;
