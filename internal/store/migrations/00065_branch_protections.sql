-- Branch protection, per repository and branch name as the REST API
-- sets it (internal/protection): the settings are one JSON document
-- (protection.Settings), read whole by the push check and the merge
-- gate; id is the rule's id in branch_protection_rule payloads.

-- +goose Up
CREATE TABLE branch_protections (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    branch        TEXT NOT NULL,
    settings      TEXT NOT NULL,
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX branch_protections_branch ON branch_protections (repository_id, branch);

-- +goose Down
DROP TABLE branch_protections;
