package actions

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/store"
)

// The cache service's first protocol, which @actions/cache speaks to a
// server it takes for the self-managed edition (GITHUB_SERVER_URL not
// github.com, *.ghe.com or *.localhost), at ACTIONS_CACHE_URL (or
// ACTIONS_RESULTS_URL) + _apis/artifactcache/, with the runtime token:
//
//	GET   cache?keys=K1,K2&version=V  the entry a restore takes (200, or 204 for none)
//	POST  caches {key, version}       reserve an entry: {cacheId}, 409 when it exists
//	PATCH caches/{id}                 a chunk, Content-Range: bytes START-END/*
//	POST  caches/{id} {size}          commit: the chunks, joined in offset order, must make size
//
// It shares the entries, refs and restore order of the v2 service
// (caches.go).
const cacheV1Path = "/_apis/artifactcache/"

// maxCacheChunk bounds a v1 chunk (the client sends 32 MiB at most).
const maxCacheChunk = 128 << 20

// registerCacheV1 mounts the v1 cache service.
func (s *Service) registerCacheV1(mux interface{ Handle(string, http.Handler) }) {
	mux.Handle("GET "+cacheV1Path+"cache", s.serveCacheV1(s.cacheV1Lookup))
	mux.Handle("POST "+cacheV1Path+"caches", s.serveCacheV1(s.cacheV1Reserve))
	mux.Handle("PATCH "+cacheV1Path+"caches/{id}", s.serveCacheV1(s.cacheV1Chunk))
	mux.Handle("POST "+cacheV1Path+"caches/{id}", s.serveCacheV1(s.cacheV1Commit))
}

// cacheV1Error is an answer of the v1 service other than 2xx: its status
// and a JSON body with message.
type cacheV1Error struct {
	Status  int
	Message string
}

func (e *cacheV1Error) Error() string { return e.Message }

// serveCacheV1 authenticates the request by its runtime token and writes
// the handler's errors as JSON with message (internal ones hidden).
func (s *Service) serveCacheV1(h func(http.ResponseWriter, *http.Request, *runtimeCaller) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := s.runtimeCallerOf(r)
		if errors.Is(err, errRuntimeAuth) {
			err = &cacheV1Error{http.StatusUnauthorized, "a valid ACTIONS_RUNTIME_TOKEN is required"}
		}
		if err == nil && s.Blobs == nil {
			err = &cacheV1Error{http.StatusNotFound, "caches are not stored on this server"}
		}
		if err == nil {
			err = h(w, r, c)
		}
		if err == nil {
			return
		}
		var e *cacheV1Error
		if !errors.As(err, &e) {
			e = &cacheV1Error{http.StatusInternalServerError, "internal error"}
		}
		writeCacheV1(w, e.Status, map[string]string{"message": e.Message})
	})
}

func writeCacheV1(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// cacheV1Lookup answers GET cache?keys=&version=: the first key exactly,
// the others as restore keys.
func (s *Service) cacheV1Lookup(w http.ResponseWriter, r *http.Request, c *runtimeCaller) error {
	keys := strings.Split(r.URL.Query().Get("keys"), ",")
	version := r.URL.Query().Get("version")
	if keys[0] == "" || version == "" {
		return &cacheV1Error{http.StatusBadRequest, "keys and version are required"}
	}
	e, err := s.lookupCache(r.Context(), c, keys[0], keys[1:], version)
	if errors.Is(err, store.ErrNotFound) {
		w.WriteHeader(http.StatusNoContent)
		return nil
	}
	if err != nil {
		return err
	}
	u, err := s.Blobs.URL(r.Context(), cacheKey(e.ID), cacheSignedURLTTL)
	if err != nil {
		return err
	}
	writeCacheV1(w, http.StatusOK, map[string]any{"cacheKey": e.Key, "scope": e.Ref, "cacheVersion": e.Version,
		"creationTime": e.CreatedAt.UTC().Format(time.RFC3339), "archiveLocation": reachedURL(withReached(r), s.BaseURL, u)})
	return nil
}

// cacheV1Reserve answers POST caches: the entry reserved on the caller's
// ref.
func (s *Service) cacheV1Reserve(w http.ResponseWriter, r *http.Request, c *runtimeCaller) error {
	var req struct {
		Key     string `json:"key"`
		Version string `json:"version"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxTwirpBody)).Decode(&req); err != nil || req.Key == "" || req.Version == "" {
		return &cacheV1Error{http.StatusBadRequest, "key and version are required"}
	}
	id, _, err := s.createCache(r.Context(), c, req.Key, req.Version)
	if errors.Is(err, errCacheExists) {
		return &cacheV1Error{http.StatusConflict, fmt.Sprintf("Cache already exists. Key: %s, Version: %s", req.Key, req.Version)}
	}
	if err != nil {
		return err
	}
	writeCacheV1(w, http.StatusCreated, map[string]int64{"cacheId": id})
	return nil
}

// reservedCache checks that the path's entry is the caller repository's
// and not committed yet.
func (s *Service) reservedCache(ctx context.Context, r *http.Request, c *runtimeCaller) (int64, error) {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if err != nil {
		return 0, &cacheV1Error{http.StatusNotFound, "no such cache entry"}
	}
	var n int
	if err := s.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM actions_caches WHERE id = $1 AND repository_id = $2
		AND NOT finalized`, id, c.RepoID).Scan(&n); err != nil {
		return 0, err
	}
	if n == 0 {
		return 0, &cacheV1Error{http.StatusNotFound, "no reserved cache entry of this id"}
	}
	return id, nil
}

// cacheChunkKey is the blob key of the v1 chunk of the entry id starting
// at start.
func cacheChunkKey(id, start int64) string {
	return blockKey("caches", id, fmt.Sprintf("v1-%020d", start))
}

var contentRange = regexp.MustCompile(`^bytes (\d+)-(\d+)/(\*|\d+)$`)

// cacheV1Chunk answers PATCH caches/{id}: the chunk is kept until the
// commit.
func (s *Service) cacheV1Chunk(w http.ResponseWriter, r *http.Request, c *runtimeCaller) error {
	ctx := r.Context()
	id, err := s.reservedCache(ctx, r, c)
	if err != nil {
		return err
	}
	m := contentRange.FindStringSubmatch(r.Header.Get("Content-Range"))
	var start, end int64
	if m != nil {
		start, _ = strconv.ParseInt(m[1], 10, 64)
		end, _ = strconv.ParseInt(m[2], 10, 64)
	}
	if m == nil || end < start || end-start+1 > maxCacheChunk {
		return &cacheV1Error{http.StatusBadRequest, "Content-Range must be bytes START-END/* of a chunk of at most 128 MiB"}
	}
	key := cacheChunkKey(id, start)
	size, err := s.Blobs.Put(ctx, key, io.LimitReader(r.Body, end-start+2))
	if err != nil {
		return err
	}
	if size != end-start+1 {
		_ = s.Blobs.Delete(ctx, key)
		return &cacheV1Error{http.StatusBadRequest, fmt.Sprintf("the chunk has %d bytes, its Content-Range %d", size, end-start+1)}
	}
	_, err = s.DB.ExecContext(ctx, `INSERT INTO actions_cache_chunks (cache_id, start_offset, end_offset) VALUES ($1, $2, $3)
		ON CONFLICT (cache_id, start_offset) DO UPDATE SET end_offset = excluded.end_offset`, id, start, end)
	if err != nil { // the reservation was removed meanwhile (CachePruner)
		_ = s.Blobs.Delete(ctx, key)
		return store.Normalize(err)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// cacheV1Commit answers POST caches/{id}: the chunks, which must cover
// 0 to size-1 without a gap or an overlap, are joined into the entry's
// archive and the entry is readable.
func (s *Service) cacheV1Commit(w http.ResponseWriter, r *http.Request, c *runtimeCaller) error {
	ctx := r.Context()
	id, err := s.reservedCache(ctx, r, c)
	if err != nil {
		return err
	}
	var req struct {
		Size *int64 `json:"size"`
	}
	if err := json.NewDecoder(io.LimitReader(r.Body, maxTwirpBody)).Decode(&req); err != nil || req.Size == nil || *req.Size < 0 {
		return &cacheV1Error{http.StatusBadRequest, "size is required"}
	}
	rows, err := s.DB.QueryContext(ctx, `SELECT start_offset, end_offset FROM actions_cache_chunks WHERE cache_id = $1
		ORDER BY start_offset`, id)
	type chunk struct{ start, end int64 }
	chunks, err := store.ScanAll(rows, err, func(row store.Scanner) (chunk, error) {
		var k chunk
		return k, row.Scan(&k.start, &k.end)
	})
	if err != nil {
		return err
	}
	var next int64
	keys := make([]string, 0, len(chunks))
	for _, k := range chunks {
		if k.start != next {
			break
		}
		next = k.end + 1
		keys = append(keys, cacheChunkKey(id, k.start))
	}
	if next != *req.Size || len(keys) != len(chunks) {
		return &cacheV1Error{http.StatusBadRequest, fmt.Sprintf("the uploaded chunks make %d contiguous bytes of the %d committed", next, *req.Size)}
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.concatBlobs(ctx, pw, keys)) }()
	_, err = s.Blobs.Put(ctx, cacheKey(id), pr)
	_ = pr.Close()
	if err != nil {
		return err
	}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `UPDATE actions_caches SET finalized = TRUE, upload_token_hash = '', size_in_bytes = $1
			WHERE id = $2`, *req.Size, id); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM actions_cache_chunks WHERE cache_id = $1`, id); err != nil {
			return err
		}
		return s.evictToLimit(ctx, tx, c.RepoID, id)
	})
	if err != nil {
		return store.Normalize(err)
	}
	for _, k := range keys {
		_ = s.Blobs.Delete(ctx, k)
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
