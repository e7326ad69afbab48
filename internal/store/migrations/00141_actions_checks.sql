-- Actions runs as checks (internal/actions): each workflow run is a check
-- suite of the built-in github-actions app (workflow_run TRUE: that app
-- has one suite per run, so several on one commit, which the unique index
-- of the other apps' suites leaves out), each job a check run of it.

-- +goose Up
ALTER TABLE check_suites ADD COLUMN workflow_run BOOLEAN NOT NULL DEFAULT FALSE;
DROP INDEX check_suites_app_head;
CREATE UNIQUE INDEX check_suites_app_head ON check_suites (repository_id, head_sha, app_id) WHERE NOT workflow_run;
ALTER TABLE actions_runs ADD COLUMN check_suite_id BIGINT REFERENCES check_suites (id) ON DELETE SET NULL;
ALTER TABLE actions_jobs ADD COLUMN check_run_id BIGINT REFERENCES check_runs (id) ON DELETE SET NULL;

-- +goose Down
ALTER TABLE actions_jobs DROP COLUMN check_run_id;
ALTER TABLE actions_runs DROP COLUMN check_suite_id;
DELETE FROM check_suites WHERE workflow_run;
DROP INDEX check_suites_app_head;
CREATE UNIQUE INDEX check_suites_app_head ON check_suites (repository_id, head_sha, app_id);
ALTER TABLE check_suites DROP COLUMN workflow_run;
