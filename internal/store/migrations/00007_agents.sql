-- Enterprise custom agents: the organization each enterprise designates as
-- the source of its agent definitions, and the enterprise rulesets that
-- protect files in repositories (the custom agents source creates one).

-- +goose Up
-- An enterprise ruleset restricting file paths in the repositories it
-- targets: pushes by anyone but an enterprise owner that add, change or
-- remove a file matching one of restricted_file_paths are refused.
-- Targets are conditions, as on the platform: one organization and a
-- repository name (case-insensitive), so that a repository deleted and made
-- again under the same name stays protected.
CREATE TABLE rulesets (
    id                    {{id}},
    enterprise_id         BIGINT NOT NULL REFERENCES enterprises (id) ON DELETE CASCADE,
    purpose               TEXT NOT NULL,     -- what manages it: custom_agents
    name                  TEXT NOT NULL,
    enforcement           TEXT NOT NULL,     -- active | evaluate | disabled
    target                TEXT NOT NULL,     -- push
    org_id                BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    repository_name       TEXT NOT NULL,
    restricted_file_paths TEXT NOT NULL,     -- JSON array of glob patterns; * never crosses /
    created_at            {{time}} NOT NULL,
    updated_at            {{time}} NOT NULL
);
-- One managed ruleset per purpose and enterprise: PUT upserts on it, so
-- concurrent PUTs can never leave a second, orphaned ruleset enforced.
CREATE UNIQUE INDEX rulesets_enterprise_purpose ON rulesets (enterprise_id, purpose);
-- The pre-receive check looks rulesets up by the pushed repository.
CREATE INDEX rulesets_target_repository ON rulesets (org_id, lower(repository_name));

-- The source organization of an enterprise's custom agents; its
-- .service-private repository holds agents/*.md and the assistant's client
-- settings (.service/assistant/settings.json).
CREATE TABLE custom_agent_sources (
    enterprise_id BIGINT NOT NULL PRIMARY KEY REFERENCES enterprises (id) ON DELETE CASCADE,
    org_id        BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL
);

-- +goose Down
DROP TABLE custom_agent_sources;
DROP TABLE rulesets;
