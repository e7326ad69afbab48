-- Actions settings of issue 51 item 3 kept as one JSON document per place
-- and name (fork-pr-workflows-private-repos, fork-pr-contributor-approval,
-- oidc-sub, self-hosted-runners): a place without a row has the
-- platform's default. Its scope is repo, org or enterprise, as
-- actions_policies'. actions_self_hosted_repositories are the
-- repositories an organization selected for its self-hosted runners
-- (enabled_repositories: selected).

-- +goose Up
CREATE TABLE actions_place_settings (
    scope      TEXT NOT NULL,
    scope_id   BIGINT NOT NULL,
    repository_id   BIGINT REFERENCES repositories (id) ON DELETE CASCADE,
    organization_id BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    enterprise_id   BIGINT REFERENCES enterprises (id) ON DELETE CASCADE,
    name       TEXT NOT NULL,
    value      TEXT NOT NULL,
    updated_at {{time}} NOT NULL,
    PRIMARY KEY (scope, scope_id, name)
);

CREATE TABLE actions_self_hosted_repositories (
    organization_id BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    repository_id   BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    PRIMARY KEY (organization_id, repository_id)
);

-- +goose Down
DROP TABLE actions_self_hosted_repositories;
DROP TABLE actions_place_settings;
