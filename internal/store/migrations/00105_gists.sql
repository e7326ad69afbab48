-- Gists (POST /gists): each is a bare git repository under DATA/gists,
-- named by its hex id (gists.name); its files and history are read from
-- git, the row holds what git does not: owner, description, visibility,
-- the gist it was forked from. Stars and comments beside it.

-- +goose Up
CREATE TABLE gists (
    id          {{id}},
    name        TEXT NOT NULL UNIQUE,
    owner_id    BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    description TEXT,
    public      BOOLEAN NOT NULL,
    fork_of_id  BIGINT REFERENCES gists (id) ON DELETE SET NULL,
    created_at  {{time}} NOT NULL,
    updated_at  {{time}} NOT NULL
);
CREATE INDEX gists_owner ON gists (owner_id, updated_at);
CREATE INDEX gists_public ON gists (public, updated_at);
CREATE INDEX gists_fork_of ON gists (fork_of_id);

CREATE TABLE gist_stars (
    user_id    BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    gist_id    BIGINT NOT NULL REFERENCES gists (id) ON DELETE CASCADE,
    created_at {{time}} NOT NULL,
    PRIMARY KEY (user_id, gist_id)
);
CREATE INDEX gist_stars_gist ON gist_stars (gist_id);

CREATE TABLE gist_comments (
    id         {{id}},
    gist_id    BIGINT NOT NULL REFERENCES gists (id) ON DELETE CASCADE,
    user_id    BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    body       TEXT NOT NULL,
    created_at {{time}} NOT NULL,
    updated_at {{time}} NOT NULL
);
CREATE INDEX gist_comments_gist ON gist_comments (gist_id, id);

-- +goose Down
DROP TABLE gist_comments;
DROP TABLE gist_stars;
DROP TABLE gists;
