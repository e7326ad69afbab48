-- Branches linked to issues (GraphQL createLinkedBranch, deleteLinkedBranch,
-- Issue.linkedBranches; gh issue develop).
--
-- issue_linked_branches: one row per branch linked to an issue. The
-- branch may be in another repository than the issue's. The row is
-- written in the transaction that records the push creating the branch
-- (a githost push intent), and goes when the branch is deleted (its
-- DeleteEvent, in that push's transaction), when the link is deleted, or
-- with the issue or the branch's repository. A renamed branch keeps its
-- links under its new name.

-- +goose Up
CREATE TABLE issue_linked_branches (
    id            {{id}},
    issue_id      BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    branch        TEXT NOT NULL,
    created_at    {{time}} NOT NULL
);
CREATE UNIQUE INDEX issue_linked_branches_issue ON issue_linked_branches (issue_id, repository_id, branch);
CREATE INDEX issue_linked_branches_branch ON issue_linked_branches (repository_id, branch);

-- +goose Down
DROP TABLE issue_linked_branches;
