-- The references of each repository as its recorded pushes left them:
-- githost.recordPush writes, in the transaction that records a push's
-- events, the new value of each reference the push moved, when git's
-- reference still has that value (a push recorded late, by the push
-- recovery worker or after a later push's own recording, writes nothing
-- older than git). A restore (forgeapi restore) brings a repository
-- copied after the database's snapshot back to what the snapshot knows:
-- a reference that moved after it is set back, one deleted after it
-- comes back (githost.RefRestorer). A deleted reference keeps its row,
-- with the zero SHA. recorded_refs_since holds when the table started:
-- git moved references before then without a row here, and a restore
-- leaves alone what it cannot tell from the rows.

-- +goose Up
CREATE TABLE recorded_refs (
    repository_id BIGINT NOT NULL REFERENCES repositories (id) ON DELETE CASCADE,
    ref           TEXT NOT NULL,
    sha           TEXT NOT NULL,
    PRIMARY KEY (repository_id, ref)
);
CREATE TABLE recorded_refs_since (since {{time}} NOT NULL);
INSERT INTO recorded_refs_since (since) VALUES (CURRENT_TIMESTAMP);

-- +goose Down
DROP TABLE recorded_refs_since;
DROP TABLE recorded_refs;
