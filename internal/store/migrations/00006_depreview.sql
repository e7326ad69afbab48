-- Dependency review: the advisory database in OSV format, as imported by
-- `forgeapi advisories import`. Servers build their in-memory advisory index
-- from these rows and rebuild it when advisory_db_state.version changes.

-- +goose Up
CREATE TABLE advisories (
    id         TEXT PRIMARY KEY,  -- the OSV id (GHSA-..., PYSEC-..., RUSTSEC-...)
    hash       TEXT NOT NULL,     -- advisory.ContentHash of document
    document   {{blob}} NOT NULL, -- the raw OSV JSON document
    created_at {{time}} NOT NULL,
    updated_at {{time}} NOT NULL
);

-- One row (id = 1): version grows with every import that changes advisories.
CREATE TABLE advisory_db_state (
    id      INTEGER PRIMARY KEY,
    version BIGINT NOT NULL
);
INSERT INTO advisory_db_state (id, version) VALUES (1, 0);

-- +goose Down
DROP TABLE advisory_db_state;
DROP TABLE advisories;
