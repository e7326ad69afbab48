// Package advisorydb keeps dependency review's advisory database in the
// store: the raw OSV JSON document and content hash of every advisory
// (table advisories), and a version that grows with every import that
// changes something (table advisory_db_state).
//
// Import writes a parsed database (see package advisory) in one
// transaction. Source serves the in-memory advisory.Index built from the
// stored documents and rebuilds it when the stored version moves, so that
// several servers sharing one PostgreSQL database, or a server and the
// `forgeapi advisories import` command sharing one SQLite file, all see
// an import without a restart.
package advisorydb

import (
	"context"
	"errors"
	"fmt"
	"os"

	"forgeapi/internal/depreview/advisory"
	"forgeapi/internal/store"
)

// Counts says what an import did with the advisories it read.
type Counts struct {
	Added     int // ids that were not stored
	Updated   int // stored ids whose content hash changed
	Unchanged int // stored ids with the same content hash
}

// Changed reports whether the import wrote anything.
func (c Counts) Changed() bool { return c.Added+c.Updated > 0 }

// ErrNoAdvisories is returned by ReadPath for a directory or archive that
// holds no *.json file.
var ErrNoAdvisories = errors.New("no OSV advisory files (*.json) found")

// ReadPath parses the advisory database at path: a directory (read
// recursively) or a zip archive of OSV JSON files, as the public advisory
// databases publish them. It fails, without a partial result, on the
// first unreadable or invalid file (a *advisory.FileError), on a path that
// is neither a directory nor a zip archive, and with ErrNoAdvisories when
// there is nothing to import.
func ReadPath(path string) ([]advisory.Record, error) {
	info, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	var records []advisory.Record
	if info.IsDir() {
		records, err = advisory.ParseDir(path)
	} else {
		records, err = advisory.ParseZip(path)
		var fileErr *advisory.FileError
		if err != nil && !errors.As(err, &fileErr) {
			return nil, fmt.Errorf("%s is neither a directory nor a readable zip archive: %v", path, err)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(records) == 0 {
		return nil, fmt.Errorf("%s: %w", path, ErrNoAdvisories)
	}
	return records, nil
}

// insertBatch is the number of advisories written per INSERT statement
// (5 parameters each, far below both databases' parameter limits).
const insertBatch = 200

// Import stores records (unique ids, as ReadPath returns them) in one
// transaction: new ids are inserted, ids whose content hash differs are
// replaced, the rest are left alone. Advisories stored earlier but absent
// from records are kept, so importing one ecosystem's files never drops
// another's. When anything changed, the database version grows by one.
// Importing the same records twice changes nothing the second time.
func Import(ctx context.Context, db *store.DB, records []advisory.Record) (Counts, error) {
	var counts Counts
	err := db.Tx(ctx, func(tx *store.Tx) error {
		counts = Counts{}
		stored, err := storedHashes(ctx, tx)
		if err != nil {
			return err
		}
		var writes []advisory.Record
		for _, r := range records {
			hash, ok := stored[r.ID]
			switch {
			case !ok:
				counts.Added++
			case hash != r.Hash:
				counts.Updated++
			default:
				counts.Unchanged++
				continue
			}
			writes = append(writes, r)
		}
		if err := upsert(ctx, tx, writes); err != nil {
			return err
		}
		if !counts.Changed() {
			return nil
		}
		_, err = tx.ExecContext(ctx, `UPDATE advisory_db_state SET version = version + 1 WHERE id = 1`)
		return err
	})
	return counts, err
}

// storedHashes returns the content hash of every stored advisory by id.
func storedHashes(ctx context.Context, q store.Q) (map[string]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, hash FROM advisories`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	hashes := make(map[string]string)
	for rows.Next() {
		var id, hash string
		if err := rows.Scan(&id, &hash); err != nil {
			return nil, err
		}
		hashes[id] = hash
	}
	return hashes, rows.Err()
}

// upsert inserts or replaces the advisories, insertBatch rows per statement.
func upsert(ctx context.Context, q store.Q, records []advisory.Record) error {
	now := store.Now()
	for start := 0; start < len(records); start += insertBatch {
		batch := records[start:min(start+insertBatch, len(records))]
		query := `INSERT INTO advisories (id, hash, document, created_at, updated_at) VALUES `
		args := make([]any, 0, len(batch)*4+1)
		args = append(args, now)
		for i, r := range batch {
			if i > 0 {
				query += ", "
			}
			n := len(args)
			query += fmt.Sprintf("($%d, $%d, $%d, $1, $1)", n+1, n+2, n+3)
			args = append(args, r.ID, r.Hash, r.JSON)
		}
		query += ` ON CONFLICT (id) DO UPDATE SET hash = excluded.hash, document = excluded.document, updated_at = excluded.updated_at`
		if _, err := q.ExecContext(ctx, query, args...); err != nil {
			return fmt.Errorf("store advisories: %w", err)
		}
	}
	return nil
}

// Version returns the version of the stored advisory set: it grows with
// every import that changes an advisory.
func Version(ctx context.Context, q store.Q) (int64, error) {
	var v int64
	err := q.QueryRowContext(ctx, `SELECT version FROM advisory_db_state WHERE id = 1`).Scan(&v)
	return v, store.Normalize(err)
}

// Documents returns the stored OSV documents, ordered by id.
func Documents(ctx context.Context, q store.Q) ([][]byte, error) {
	rows, err := q.QueryContext(ctx, `SELECT document FROM advisories ORDER BY id`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var docs [][]byte
	for rows.Next() {
		var doc []byte
		if err := rows.Scan(&doc); err != nil {
			return nil, err
		}
		docs = append(docs, doc)
	}
	return docs, rows.Err()
}
