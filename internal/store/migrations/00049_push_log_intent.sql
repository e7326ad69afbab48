-- A server push's intent (githost.PushIntent): a change it makes besides
-- moving references, such as the API's merge of a pull request (kind
-- 'pulls.merge', subject the pull request's number). Whoever records the
-- push, its own request or the push recovery after a crash, carries it
-- out in the recording transaction; '' for none (git pushes and the
-- contents API's).

-- +goose Up
ALTER TABLE push_log ADD COLUMN intent_kind TEXT NOT NULL DEFAULT '';
ALTER TABLE push_log ADD COLUMN intent_subject TEXT NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE push_log DROP COLUMN intent_subject;
ALTER TABLE push_log DROP COLUMN intent_kind;
