-- When a pull request's issue row was merged: the issue view's
-- pull_request.merged_at, written by the merge's transaction
-- (issues.MarkMerged) so the issues API need not read pull_requests.

-- +goose Up
ALTER TABLE issues ADD COLUMN merged_at {{time}};

-- +goose Down
ALTER TABLE issues DROP COLUMN merged_at;
