-- Organizations' custom properties of repositories (package customprops):
-- the definitions, and each repository's values. default_value,
-- allowed_values and value hold JSON (a string, or an array of strings for
-- multi_select); NULL is none. A repository without a value of a required
-- property has its default.

-- +goose Up
CREATE TABLE custom_properties (
    id                 {{id}},
    org_id             BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name               TEXT NOT NULL,
    value_type         TEXT NOT NULL,  -- string | single_select | multi_select | true_false
    required           BOOLEAN NOT NULL DEFAULT FALSE,
    default_value      TEXT,
    description        TEXT,
    allowed_values     TEXT,
    values_editable_by TEXT NOT NULL DEFAULT 'org_actors'  -- org_actors | org_and_repo_actors
);
CREATE UNIQUE INDEX custom_properties_org_name ON custom_properties (org_id, lower(name));
CREATE TABLE custom_property_values (
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    property_id   BIGINT NOT NULL REFERENCES custom_properties (id) ON DELETE CASCADE,
    value         TEXT NOT NULL,
    PRIMARY KEY (repository_id, property_id)
);
CREATE INDEX custom_property_values_property ON custom_property_values (property_id);

-- +goose Down
DROP TABLE custom_property_values;
DROP TABLE custom_properties;
