-- Repository collaborators and their invitations
-- (PUT /repos/{owner}/{repo}/collaborators/{username}): a collaborator has
-- a permission on one repository; an invitation waits for the invitee to
-- accept it (PATCH /user/repository_invitations/{id}).

-- +goose Up
CREATE TABLE repo_collaborators (
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    user_id       BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    permission    TEXT NOT NULL,                -- pull | triage | push | maintain | admin
    created_at    {{time}} NOT NULL,
    PRIMARY KEY (repository_id, user_id)
);
CREATE INDEX repo_collaborators_user ON repo_collaborators (user_id);
CREATE TABLE repo_invitations (
    id            {{id}},
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    invitee_id    BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    inviter_id    BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    permission    TEXT NOT NULL,
    created_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX repo_invitations_repo_invitee ON repo_invitations (repository_id, invitee_id);
CREATE INDEX repo_invitations_invitee ON repo_invitations (invitee_id);

-- +goose Down
DROP TABLE repo_invitations;
DROP TABLE repo_collaborators;
