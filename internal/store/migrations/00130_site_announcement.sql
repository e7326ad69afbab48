-- The installation's announcement banner (internal/siteadmin: GET, PATCH
-- and DELETE /enterprise/announcement): at most one row, id 1.

-- +goose Up
CREATE TABLE site_announcement (
    id               INTEGER NOT NULL PRIMARY KEY CHECK (id = 1),
    message          TEXT NOT NULL,
    expires_at       {{time}},
    user_dismissible BOOLEAN NOT NULL DEFAULT FALSE,
    updated_at       {{time}} NOT NULL
);

-- +goose Down
DROP TABLE site_announcement;
