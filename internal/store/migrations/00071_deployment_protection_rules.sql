-- Custom deployment protection rules (.../environments/{name}/deployment_protection_rules):
-- an app enabled on an environment to gate its deployments. An app enabled
-- once per environment; deleting the app removes its rules.

-- +goose Up
CREATE TABLE deployment_protection_rules (
    id             {{id}},
    environment_id BIGINT NOT NULL REFERENCES environments (id) ON DELETE CASCADE,
    app_id         BIGINT NOT NULL REFERENCES apps (id) ON DELETE CASCADE,
    created_at     {{time}} NOT NULL
);
CREATE UNIQUE INDEX deployment_protection_rules_app ON deployment_protection_rules (environment_id, app_id);

-- +goose Down
DROP TABLE deployment_protection_rules;
