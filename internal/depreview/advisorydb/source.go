package advisorydb

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"forgeapi/internal/depreview/advisory"
	"forgeapi/internal/store"
)

// Snapshot is an advisory index with the database version it was built
// from. The index is read-only and safe for concurrent use.
type Snapshot struct {
	Version int64
	Index   *advisory.Index
}

// Source hands out the advisory index of the stored advisories. It is
// safe for concurrent use. Create it with NewSource.
type Source struct {
	db      *store.DB
	current atomic.Pointer[Snapshot]
	reload  sync.Mutex // one rebuild at a time
}

// NewSource returns a Source over db. Nothing is read until the first
// call of Current.
func NewSource(db *store.DB) *Source {
	return &Source{db: db}
}

// Current returns the index of the stored advisories. It reads the stored
// version (one single-row query) and, when it differs from the version of
// the index in memory, rebuilds the index from the stored documents and
// swaps it in; callers that arrive during a rebuild wait for it. An error
// reading the store is returned as is.
func (s *Source) Current(ctx context.Context) (*Snapshot, error) {
	version, err := Version(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("read advisory database version: %w", err)
	}
	if snap := s.current.Load(); snap != nil && snap.Version == version {
		return snap, nil
	}
	s.reload.Lock()
	defer s.reload.Unlock()
	if snap := s.current.Load(); snap != nil && snap.Version >= version {
		return snap, nil
	}
	snap, err := s.build(ctx)
	if err != nil {
		return nil, err
	}
	s.current.Store(snap)
	return snap, nil
}

// build reads the version, then the documents, and indexes them. An
// import that commits in between leaves the index labelled with an older
// version than its documents, which only costs one more rebuild later;
// the reverse order could keep a stale index labelled as current.
func (s *Source) build(ctx context.Context) (*Snapshot, error) {
	version, err := Version(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("read advisory database version: %w", err)
	}
	docs, err := Documents(ctx, s.db)
	if err != nil {
		return nil, fmt.Errorf("read advisories: %w", err)
	}
	index, err := advisory.IndexFromJSON(docs)
	if err != nil {
		return nil, fmt.Errorf("index advisories: %w", err)
	}
	return &Snapshot{Version: version, Index: index}, nil
}
