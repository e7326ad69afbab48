-- The repository's issue rows by kind (issue or pull request) and state,
-- in id order: counting a repository's open pull requests (the
-- totalCount of gh pr list, internal/pulls Find) reads this index alone
-- instead of every pull request's issue row (10,000 row reads for a
-- repository of 10,000 pull requests).

-- +goose Up
CREATE INDEX issues_kind_state ON issues (repository_id, is_pull_request, state, id);

-- +goose Down
DROP INDEX issues_kind_state;
