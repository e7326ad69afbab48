-- Nested teams inherit their ancestors' repositories, as on the
-- platform: a member of a child team gets the permission every team
-- above it holds. team_ancestors is the closure of teams.parent_id: a row
-- (team_id, ancestor_id) for the team itself and each team above it. The
-- teams service keeps it in the transaction of each create and each
-- change of parent; deleting a team removes its rows (its child teams
-- go with it). repo_grants joins through it from the user's side: every
-- reader asks about one user, who is in a few teams, while a repository
-- may be held by hundreds of teams. SQLite, which keeps no statistics
-- here, would start from the repository; CROSS JOIN fixes its order
-- (user's teams, their ancestors, their repositories, each an index
-- probe), and PostgreSQL plans it as an inner join.

-- +goose Up
CREATE TABLE team_ancestors (
    team_id     BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    ancestor_id BIGINT NOT NULL REFERENCES teams (id) ON DELETE CASCADE,
    PRIMARY KEY (team_id, ancestor_id)
);
CREATE INDEX team_ancestors_ancestor ON team_ancestors (ancestor_id);
INSERT INTO team_ancestors (team_id, ancestor_id)
    WITH RECURSIVE up (team_id, ancestor_id) AS (
        SELECT id, id FROM teams
        UNION
        SELECT up.team_id, t.parent_id FROM up JOIN teams t ON t.id = up.ancestor_id WHERE t.parent_id IS NOT NULL
    )
    SELECT team_id, ancestor_id FROM up;
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

-- +goose Down
DROP VIEW repo_grants;
CREATE VIEW repo_grants AS
    SELECT repository_id, user_id, permission,
           CASE permission WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'push' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM repo_collaborators
    UNION ALL
    SELECT tr.repository_id, tm.user_id, tr.permission,
           CASE tr.permission WHEN 'admin' THEN 5 WHEN 'maintain' THEN 4 WHEN 'push' THEN 3 WHEN 'triage' THEN 2 ELSE 1 END AS rank
    FROM team_repos tr JOIN team_members tm ON tm.team_id = tr.team_id;
DROP TABLE team_ancestors;
