-- Organization roles (/orgs/{org}/organization-roles) and custom
-- repository roles (/orgs/{org}/custom-repository-roles).
--
-- org_roles holds the platform's predefined roles (org_id NULL, seeded
-- here: all_repo_read ... all_repo_admin and security_manager) and each
-- organization's custom roles. A role is held by members directly
-- (org_role_users, dropped when they leave the organization) or through
-- a team (org_role_teams; members of the team and of the teams nested
-- under it hold it). The role's base_role gives its holders that access
-- to every repository of the organization: repo_grants, the one place
-- access reads what a user is granted on a repository, unites those
-- grants with collaborators and teams. Like the teams' part, each new
-- part starts from the user (org_role_users by user, team_members by
-- user) and probes an index at each step: the organization's
-- repositories by owner.
--
-- custom_repo_roles are an organization's named repository roles: a
-- base role (read, triage, write, maintain) and extra fine-grained
-- permissions.

-- +goose Up
CREATE TABLE org_roles (
    id          {{id}},
    org_id      BIGINT REFERENCES accounts (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT,
    base_role   TEXT,           -- read | triage | write | maintain | admin, or NULL
    permissions TEXT NOT NULL,  -- JSON array of fine-grained permission names
    created_at  {{time}} NOT NULL,
    updated_at  {{time}} NOT NULL
);
CREATE INDEX org_roles_org ON org_roles (org_id);
INSERT INTO org_roles (org_id, name, description, base_role, permissions, created_at, updated_at) VALUES
    (NULL, 'all_repo_read', 'Grants read access to all repositories in the organization.', 'read', '[]', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP);
INSERT INTO org_roles (org_id, name, description, base_role, permissions, created_at, updated_at) VALUES
    (NULL, 'all_repo_triage', 'Grants triage access to all repositories in the organization.', 'triage', '[]', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP);
INSERT INTO org_roles (org_id, name, description, base_role, permissions, created_at, updated_at) VALUES
    (NULL, 'all_repo_write', 'Grants write access to all repositories in the organization.', 'write', '[]', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP);
INSERT INTO org_roles (org_id, name, description, base_role, permissions, created_at, updated_at) VALUES
    (NULL, 'all_repo_maintain', 'Grants maintenance access to all repositories in the organization.', 'maintain', '[]', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP);
INSERT INTO org_roles (org_id, name, description, base_role, permissions, created_at, updated_at) VALUES
    (NULL, 'all_repo_admin', 'Grants admin access to all repositories in the organization.', 'admin', '[]', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP);
INSERT INTO org_roles (org_id, name, description, base_role, permissions, created_at, updated_at) VALUES
    (NULL, 'security_manager', 'Manages security policies, security alerts, and security configurations for an organization and all its repositories.', 'read',
     '["read_organization_custom_org_role","read_organization_custom_repo_role","read_audit_logs"]', CURRENT_TIMESTAMP, CURRENT_TIMESTAMP);
CREATE TABLE org_role_users (
    org_id     BIGINT NOT NULL,
    user_id    BIGINT NOT NULL,
    role_id    BIGINT NOT NULL REFERENCES org_roles (id) ON DELETE CASCADE,
    created_at {{time}} NOT NULL,
    PRIMARY KEY (org_id, user_id, role_id),
    FOREIGN KEY (org_id, user_id) REFERENCES org_members (org_id, user_id) ON DELETE CASCADE
);
CREATE INDEX org_role_users_user ON org_role_users (user_id);
CREATE INDEX org_role_users_role ON org_role_users (role_id);
CREATE TABLE org_role_teams (
    team_id    BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    role_id    BIGINT NOT NULL REFERENCES org_roles (id) ON DELETE CASCADE,
    created_at {{time}} NOT NULL,
    PRIMARY KEY (team_id, role_id)
);
CREATE INDEX org_role_teams_role ON org_role_teams (role_id);
CREATE TABLE custom_repo_roles (
    id          {{id}},
    org_id      BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    name        TEXT NOT NULL,
    description TEXT,
    base_role   TEXT NOT NULL,  -- read | triage | write | maintain
    permissions TEXT NOT NULL,  -- JSON array
    created_at  {{time}} NOT NULL,
    updated_at  {{time}} NOT NULL
);
CREATE UNIQUE INDEX custom_repo_roles_org_name ON custom_repo_roles (org_id, name);
DROP VIEW repo_grants;
CREATE VIEW repo_grants AS
    SELECT repository_id, user_id, permission,
           CASE permission WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'push' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM repo_collaborators
    UNION ALL
    SELECT tr.repository_id, tm.user_id, tr.permission,
           CASE tr.permission WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'push' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM team_members tm CROSS JOIN team_ancestors ta CROSS JOIN team_repos tr
    WHERE ta.team_id = tm.team_id AND tr.team_id = ta.ancestor_id
    UNION ALL
    SELECT r.id AS repository_id, u.user_id,
           CASE o.base_role WHEN 'read' THEN 'pull' WHEN 'write' THEN 'push' ELSE o.base_role END AS permission,
           CASE o.base_role WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'write' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM org_role_users u CROSS JOIN org_roles o CROSS JOIN repositories r
    WHERE o.id = u.role_id AND o.base_role IS NOT NULL AND r.owner_id = u.org_id
    UNION ALL
    SELECT r.id AS repository_id, om.user_id,
           CASE o.base_role WHEN 'read' THEN 'pull' WHEN 'write' THEN 'push' ELSE o.base_role END AS permission,
           CASE o.base_role WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'write' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM team_members om CROSS JOIN team_ancestors oa CROSS JOIN org_role_teams rt CROSS JOIN org_roles o CROSS JOIN repositories r
    WHERE oa.team_id = om.team_id AND rt.team_id = oa.ancestor_id AND o.id = rt.role_id AND o.base_role IS NOT NULL
      AND r.owner_id = om.org_id;

-- +goose Down
DROP VIEW repo_grants;
CREATE VIEW repo_grants AS
    SELECT repository_id, user_id, permission,
           CASE permission WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'push' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM repo_collaborators
    UNION ALL
    SELECT tr.repository_id, tm.user_id, tr.permission,
           CASE tr.permission WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'push' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM team_members tm CROSS JOIN team_ancestors ta CROSS JOIN team_repos tr
    WHERE ta.team_id = tm.team_id AND tr.team_id = ta.ancestor_id;
DROP TABLE custom_repo_roles;
DROP TABLE org_role_teams;
DROP TABLE org_role_users;
DROP TABLE org_roles;
