-- Pinned issues (GraphQL pinIssue/unpinIssue, Repository.pinnedIssues)
-- and the places transferred issues left (transferIssue).
--
-- issue_pins: one row per pinned issue, at most three per repository (as
-- the platform; internal/issues Pin counts them in the pinning
-- transaction). Deleting the issue or its repository takes the pin;
-- a transfer removes it.
--
-- issue_transfers: the repository and number an issue had before a
-- transfer, so that REST's GET of the old number answers 301 to the
-- issue where it is now. An issue transferred twice leaves two rows;
-- deleting the issue takes them.

-- +goose Up
CREATE TABLE issue_pins (
    id            {{id}},
    issue_id      BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    pinned_by_id  BIGINT REFERENCES accounts (id) ON DELETE SET NULL,
    pinned_at     {{time}} NOT NULL
);
CREATE UNIQUE INDEX issue_pins_issue ON issue_pins (issue_id);
CREATE INDEX issue_pins_repository ON issue_pins (repository_id, id);
CREATE TABLE issue_transfers (
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    number        BIGINT NOT NULL,
    issue_id      BIGINT NOT NULL REFERENCES issues (id) ON DELETE CASCADE,
    PRIMARY KEY (repository_id, number)
);
CREATE INDEX issue_transfers_issue ON issue_transfers (issue_id);

-- +goose Down
DROP TABLE issue_transfers;
DROP TABLE issue_pins;
