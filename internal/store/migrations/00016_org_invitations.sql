-- Invitations to organizations (PUT /orgs/{org}/memberships/{username}
-- for a user who is not a member): the membership is pending until the
-- user accepts it (PATCH /user/memberships/orgs/{org}), which makes the
-- org_members row and deletes this one.

-- +goose Up
CREATE TABLE org_invitations (
    id         {{id}},
    org_id     BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    user_id    BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    role       TEXT NOT NULL,                  -- owner | member
    inviter_id BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    created_at {{time}} NOT NULL
);
CREATE UNIQUE INDEX org_invitations_org_user ON org_invitations (org_id, user_id);
CREATE INDEX org_invitations_user ON org_invitations (user_id);

-- +goose Down
DROP TABLE org_invitations;
