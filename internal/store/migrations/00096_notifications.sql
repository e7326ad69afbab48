-- Notifications (GET /notifications): one thread per user and issue or
-- pull request of a repository (subject_type Issue or PullRequest,
-- number its number), made and bumped by activity in the change's
-- transaction (notifications.Sink). notification_participants are the
-- users taking part in a conversation (its author, commenters,
-- assignees, requested reviewers, mentioned users), with the reason
-- their threads carry; subscribed false is a thread the user
-- unsubscribed from, ignored one they ignore.

-- +goose Up
CREATE TABLE notification_threads (
    id                 {{id}},
    user_id            BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    repository_id      BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    subject_type       TEXT NOT NULL,
    number             BIGINT NOT NULL,
    title              TEXT NOT NULL,
    latest_comment_url TEXT,
    reason             TEXT NOT NULL,
    unread             BOOLEAN NOT NULL,
    done               BOOLEAN NOT NULL DEFAULT FALSE,
    subscribed         BOOLEAN NOT NULL DEFAULT TRUE,
    ignored            BOOLEAN NOT NULL DEFAULT FALSE,
    last_read_at       {{time}},
    updated_at         {{time}} NOT NULL,
    created_at         {{time}} NOT NULL
);
CREATE UNIQUE INDEX notification_threads_subject ON notification_threads (user_id, repository_id, number);
CREATE INDEX notification_threads_user ON notification_threads (user_id, updated_at);

CREATE TABLE notification_participants (
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number        BIGINT NOT NULL,
    user_id       BIGINT NOT NULL REFERENCES accounts (id) ON DELETE CASCADE,
    reason        TEXT NOT NULL,
    PRIMARY KEY (repository_id, number, user_id)
);

-- +goose Down
DROP TABLE notification_participants;
DROP TABLE notification_threads;
