-- A repository's autolink references and tag protection rules (package
-- reposettings). An autolink turns KEY_PREFIX<num> into a link made from
-- url_template; a tag protection rule's pattern (a glob) names tags that
-- only the repository's admins and maintainers may push.

-- +goose Up
CREATE TABLE autolinks (
    id              {{id}},
    repository_id   BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    key_prefix      TEXT NOT NULL,
    url_template    TEXT NOT NULL,
    is_alphanumeric BOOLEAN NOT NULL,
    updated_at      {{time}} NOT NULL
);
CREATE UNIQUE INDEX autolinks_repository_prefix ON autolinks (repository_id, lower(key_prefix));
CREATE TABLE tag_protections (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    pattern       TEXT NOT NULL,
    created_at    {{time}} NOT NULL,
    updated_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX tag_protections_repository_pattern ON tag_protections (repository_id, pattern);

-- +goose Down
DROP TABLE tag_protections;
DROP TABLE autolinks;
