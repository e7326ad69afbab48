-- Teams of an organization (GET/POST /orgs/{org}/teams): a team has
-- members (member or maintainer), each an active member of the
-- organization (the foreign key to org_members removes them from its teams
-- when they leave it); pending members invited to the organization through
-- a team wait in team_invitations until they accept (removed with the
-- invitation); team_repos gives the team's members a permission on the
-- organization's repositories.
--
-- repo_grants is every user's permission on a repository besides owning it
-- or belonging to its organization: direct collaborators and the teams
-- that hold it. It is the one place access reads them (the guard, git,
-- /user/repos, feeds); rank orders the permissions (admin 5 ... pull 1) so
-- a reader takes the highest with ORDER BY rank DESC LIMIT 1.

-- +goose Up
CREATE TABLE teams (
    id                   {{id}},
    org_id               BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    parent_id            BIGINT REFERENCES teams (id) ON DELETE CASCADE,
    name                 TEXT NOT NULL,
    slug                 TEXT NOT NULL,
    description          TEXT NOT NULL,
    privacy              TEXT NOT NULL,  -- secret | closed
    notification_setting TEXT NOT NULL,  -- notifications_enabled | notifications_disabled
    permission           TEXT NOT NULL,  -- pull | push (the default for repositories added without one)
    created_at           {{time}} NOT NULL,
    updated_at           {{time}} NOT NULL
);
CREATE UNIQUE INDEX teams_org_slug ON teams (org_id, slug);
CREATE INDEX teams_parent ON teams (parent_id);
CREATE TABLE team_members (
    team_id    BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    org_id     BIGINT NOT NULL,
    user_id    BIGINT NOT NULL,
    role       TEXT NOT NULL,               -- member | maintainer
    created_at {{time}} NOT NULL,
    PRIMARY KEY (team_id, user_id),
    FOREIGN KEY (org_id, user_id) REFERENCES org_members (org_id, user_id) ON DELETE CASCADE
);
CREATE INDEX team_members_user ON team_members (user_id);
CREATE INDEX team_members_org_user ON team_members (org_id, user_id);
CREATE TABLE team_invitations (
    team_id    BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    org_id     BIGINT NOT NULL,
    user_id    BIGINT NOT NULL,
    role       TEXT NOT NULL,
    inviter_id BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    created_at {{time}} NOT NULL,
    PRIMARY KEY (team_id, user_id),
    FOREIGN KEY (org_id, user_id) REFERENCES org_invitations (org_id, user_id) ON DELETE CASCADE
);
CREATE INDEX team_invitations_org_user ON team_invitations (org_id, user_id);
CREATE TABLE team_repos (
    team_id       BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    permission    TEXT NOT NULL,            -- pull | triage | push | maintain | admin
    created_at    {{time}} NOT NULL,
    PRIMARY KEY (team_id, repository_id)
);
CREATE INDEX team_repos_repo ON team_repos (repository_id);
CREATE VIEW repo_grants AS
    SELECT repository_id, user_id, permission,
           CASE permission WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'push' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM repo_collaborators
    UNION ALL
    SELECT tr.repository_id, tm.user_id, tr.permission,
           CASE tr.permission WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'push' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM team_repos tr JOIN team_members tm ON tm.team_id = tr.team_id;

-- +goose Down
DROP VIEW repo_grants;
DROP TABLE team_repos;
DROP TABLE team_invitations;
DROP TABLE team_members;
DROP TABLE teams;
