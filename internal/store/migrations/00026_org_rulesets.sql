-- Organization rulesets (/orgs/{org}/rulesets): rules git enforces on the
-- pushes to the organization's repositories whose names and references
-- the conditions select. conditions, bypass_actors and rules hold the
-- platform's JSON shapes as validated by internal/rulesets.

-- +goose Up
CREATE TABLE org_rulesets (
    id            {{id}},
    org_id        BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name          TEXT NOT NULL,
    target        TEXT NOT NULL,     -- branch | tag | push
    enforcement   TEXT NOT NULL,     -- disabled | active | evaluate
    conditions    TEXT NOT NULL,     -- JSON: ref_name and repository_name include/exclude
    bypass_actors TEXT NOT NULL,     -- JSON array
    rules         TEXT NOT NULL,     -- JSON array
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX org_rulesets_name ON org_rulesets (org_id, name);

-- +goose Down
DROP TABLE org_rulesets;
