-- Event feeds: indexes for the feed queries (see internal/feeds/query.go).
-- Every feed is a range scan of one of these, newest id first, from the
-- first id inside the 30-day window; the "public" variants serve the
-- public feeds without reading private rows. 00002 already has
-- (public, id), (actor_id, id), (repo_id, id), (org_id, id) and
-- (created_at), which the window floor and the pruner use.

-- +goose Up
CREATE INDEX events_actor_public ON events (actor_id, public, id);
CREATE INDEX events_repo_public ON events (repo_id, public, id);
CREATE INDEX events_org_public ON events (org_id, public, id);

-- +goose Down
DROP INDEX events_org_public;
DROP INDEX events_repo_public;
DROP INDEX events_actor_public;
