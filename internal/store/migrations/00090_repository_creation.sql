-- Repositories as the platform creates them: the settings the repository
-- object shows and PATCH sets (a JSON object of repos.Settings; keys it
-- lacks have the platform's defaults), topics (their names, space-separated,
-- in the order PUT .../topics gave them), template repositories (is_template)
-- and the template a repository was generated from; labels made with the
-- repository, which the label object shows as default.

-- +goose Up
ALTER TABLE repositories ADD COLUMN settings TEXT NOT NULL DEFAULT '{}';
ALTER TABLE repositories ADD COLUMN topics TEXT NOT NULL DEFAULT '';
ALTER TABLE repositories ADD COLUMN is_template BOOLEAN NOT NULL DEFAULT FALSE;
ALTER TABLE repositories ADD COLUMN template_id BIGINT REFERENCES repositories (id) ON DELETE SET NULL;
ALTER TABLE labels ADD COLUMN is_default BOOLEAN NOT NULL DEFAULT FALSE;

-- +goose Down
ALTER TABLE labels DROP COLUMN is_default;
ALTER TABLE repositories DROP COLUMN template_id;
ALTER TABLE repositories DROP COLUMN is_template;
ALTER TABLE repositories DROP COLUMN topics;
ALTER TABLE repositories DROP COLUMN settings;
