-- The code search indexer claims due repositories in the order their
-- indexing was asked for (requested_at: when the row last became due),
-- not by repository id: under a steady stream of pushes the lowest ids,
-- due again as soon as they were indexed, kept the others waiting
-- (internal/codesearch, Claim). Rows due before this migration have no
-- time and are claimed by the same query all the same.

-- +goose Up
ALTER TABLE code_search_work ADD COLUMN requested_at {{time}};
DROP INDEX code_search_work_due;
CREATE INDEX code_search_work_due ON code_search_work (requested_at, repository_id) WHERE requested > indexed;

-- +goose Down
DROP INDEX code_search_work_due;
CREATE INDEX code_search_work_due ON code_search_work (repository_id) WHERE requested > indexed;
ALTER TABLE code_search_work DROP COLUMN requested_at;
