-- Reviews of pull requests (POST .../pulls/{n}/reviews), their line
-- comments and the standalone review comments (a standalone comment is a
-- one-comment review, as on the platform), and the requested reviewers.
-- A review is PENDING until submitted (COMMENTED, APPROVED,
-- CHANGES_REQUESTED) and may be DISMISSED. A comment keeps the commit and
-- line it was made on (original_*), its place in the diff (position,
-- diff_hunk) and the comment it replies to.

-- +goose Up
CREATE TABLE pull_request_reviews (
    id              {{id}},
    pull_request_id BIGINT NOT NULL REFERENCES pull_requests (id) ON DELETE CASCADE,
    user_id         BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    state           TEXT NOT NULL,   -- PENDING | COMMENTED | APPROVED | CHANGES_REQUESTED | DISMISSED
    body            TEXT NOT NULL DEFAULT '',
    commit_id       TEXT NOT NULL,
    submitted_at    {{time}},
    created_at      {{time}} NOT NULL,
    updated_at      {{time}} NOT NULL
);
CREATE INDEX pull_request_reviews_pull ON pull_request_reviews (pull_request_id, id);
CREATE TABLE pull_request_review_comments (
    id                 {{id}},
    repository_id      BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    pull_request_id    BIGINT NOT NULL REFERENCES pull_requests (id) ON DELETE CASCADE,
    review_id          BIGINT NOT NULL REFERENCES pull_request_reviews (id) ON DELETE CASCADE,
    in_reply_to_id     BIGINT,
    user_id            BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    path               TEXT NOT NULL,
    line               INTEGER,
    side               TEXT NOT NULL DEFAULT 'RIGHT',   -- LEFT | RIGHT
    position           INTEGER,
    commit_id          TEXT NOT NULL,
    original_commit_id TEXT NOT NULL,
    diff_hunk          TEXT NOT NULL DEFAULT '',
    body               TEXT NOT NULL,
    created_at         {{time}} NOT NULL,
    updated_at         {{time}} NOT NULL
);
CREATE INDEX pull_request_review_comments_pull ON pull_request_review_comments (pull_request_id, id);
CREATE INDEX pull_request_review_comments_repo ON pull_request_review_comments (repository_id, id);
CREATE INDEX pull_request_review_comments_review ON pull_request_review_comments (review_id);
CREATE TABLE pull_request_review_requests (
    pull_request_id BIGINT NOT NULL REFERENCES pull_requests (id) ON DELETE CASCADE,
    user_id         BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    created_at      {{time}} NOT NULL,
    PRIMARY KEY (pull_request_id, user_id)
);

-- +goose Down
DROP TABLE pull_request_review_requests;
DROP TABLE pull_request_review_comments;
DROP TABLE pull_request_reviews;
