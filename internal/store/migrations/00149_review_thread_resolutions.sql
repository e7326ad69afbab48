-- Resolved review threads of pull requests (GraphQL resolveReviewThread):
-- a thread is its first comment and the replies to it; a row here marks
-- it resolved, by whom and when. Branch protection's conversation
-- resolution refuses a merge while a submitted thread has none.

-- +goose Up
CREATE TABLE review_thread_resolutions (
    comment_id      BIGINT PRIMARY KEY REFERENCES pull_request_review_comments (id) ON DELETE CASCADE,
    pull_request_id BIGINT NOT NULL REFERENCES pull_requests (id) ON DELETE CASCADE,
    user_id         BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    resolved_at     {{time}} NOT NULL
);
CREATE INDEX review_thread_resolutions_pull ON review_thread_resolutions (pull_request_id);

-- +goose Down
DROP TABLE review_thread_resolutions;
