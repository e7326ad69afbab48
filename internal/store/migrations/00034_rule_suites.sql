-- Rule suites (GET /orgs/{org}/rulesets/rule-suites, GET
-- /repos/{owner}/{repo}/rulesets/rule-suites): one row per reference
-- update that organization rulesets in active or evaluate mode applied
-- to, with the result of the active ones, the result had the evaluated
-- ones been enforced, and each rule's evaluation (JSON array).

-- +goose Up
CREATE TABLE rule_suites (
    id                {{id}},
    org_id            BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    repository_id     BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    repository_name   TEXT NOT NULL,
    actor_id          BIGINT,
    actor_name        TEXT NOT NULL,
    before_sha        TEXT NOT NULL,
    after_sha         TEXT NOT NULL,
    ref               TEXT NOT NULL,
    result            TEXT NOT NULL,    -- pass | fail | bypass (active rulesets)
    evaluation_result TEXT NOT NULL,    -- pass | fail | bypass (active and evaluate rulesets)
    evaluated         BOOLEAN NOT NULL, -- a ruleset in evaluate mode applied
    rule_evaluations  TEXT NOT NULL,
    pushed_at         {{time}} NOT NULL
);
CREATE INDEX rule_suites_org ON rule_suites (org_id, id);
CREATE INDEX rule_suites_repo ON rule_suites (repository_id, id);

-- +goose Down
DROP TABLE rule_suites;
