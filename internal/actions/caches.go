package actions

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Cache is a cache entry a job saved (the results service's cache v2):
// its key and version, the ref of the run that saved it, its archive in
// blob storage.
type Cache struct {
	ID             int64
	RepoID         int64
	Key            string
	Version        string
	Ref            string
	Size           int64
	Finalized      bool
	CreatedAt      time.Time
	LastAccessedAt time.Time
}

// cacheSignedURLTTL is how long a cache's download address works.
const cacheSignedURLTTL = time.Hour

// cacheKey is the blob key of a cache entry's archive.
func cacheKey(id int64) string { return "actions-cache-" + itoa(id) + ".tar" }

const cacheColumns = `id, repository_id, cache_key, version, ref, size_in_bytes, finalized, created_at, last_accessed_at`

func scanCache(row store.Scanner) (*Cache, error) {
	var c Cache
	err := row.Scan(&c.ID, &c.RepoID, &c.Key, &c.Version, &c.Ref, &c.Size, &c.Finalized, &c.CreatedAt, &c.LastAccessedAt)
	return &c, store.Normalize(err)
}

// runRef is the ref a run's caches are scoped to: its branch (or tag);
// a pull request's refs/pull/N/merge. base is a pull request's base
// branch ref ("" otherwise), whose caches the run reads too.
func runRef(r *Run) (ref, base string) {
	var payload struct {
		Ref         string `json:"ref"`
		Number      int64  `json:"number"`
		PullRequest struct {
			Base struct {
				Ref string `json:"ref"`
			} `json:"base"`
		} `json:"pull_request"`
	}
	_ = json.Unmarshal(r.EventPayload, &payload)
	switch {
	case r.Event == "pull_request" && payload.Number != 0:
		return "refs/pull/" + itoa(payload.Number) + "/merge", "refs/heads/" + payload.PullRequest.Base.Ref
	case strings.HasPrefix(payload.Ref, "refs/"):
		return payload.Ref, ""
	case r.HeadBranch != nil:
		return "refs/heads/" + *r.HeadBranch, ""
	}
	return "", ""
}

// cacheRefs are the ref a job of the run saves caches to and the refs it
// reads them from, in order: its own, a pull request's base branch, the
// repository's default branch.
func (s *Service) cacheRefs(ctx context.Context, c *runtimeCaller) (string, []string, error) {
	r, err := runByID(ctx, s.DB, c.RepoID, c.RunID)
	if err != nil {
		return "", nil, err
	}
	repo, err := repos.ByID(ctx, s.DB, c.RepoID)
	if err != nil {
		return "", nil, err
	}
	own, base := runRef(r)
	def := "refs/heads/" + repo.DefaultBranch
	if own == "" {
		own = def
	}
	var refs []string
	for _, ref := range []string{own, base, def} {
		if ref != "" && !contains(refs, ref) {
			refs = append(refs, ref)
		}
	}
	return own, refs, nil
}

// errCacheExists is a second save of a finalized key and version on a
// ref.
var errCacheExists = errors.New("actions: cache entry already exists")

// createCache reserves the entry of key and version on the caller's ref,
// with a new upload token (an unfinished reservation is replaced).
func (s *Service) createCache(ctx context.Context, c *runtimeCaller, key, version string) (int64, string, error) {
	ref, _, err := s.cacheRefs(ctx, c)
	if err != nil {
		return 0, "", err
	}
	token := randomToken()
	var id int64
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		old, err := scanCache(tx.QueryRowContext(ctx, `SELECT `+cacheColumns+` FROM actions_caches
			WHERE repository_id = $1 AND ref = $2 AND cache_key = $3 AND version = $4`, c.RepoID, ref, key, version))
		switch {
		case err == nil && old.Finalized:
			return errCacheExists
		case err == nil:
			if err := s.dropReservation(ctx, tx, old.ID); err != nil {
				return err
			}
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		now := tx.Now()
		return store.Normalize(tx.QueryRowContext(ctx, `INSERT INTO actions_caches (repository_id, cache_key, version, ref,
			upload_token_hash, created_at, last_accessed_at) VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`,
			c.RepoID, key, version, ref, hashToken(token), now).Scan(&id))
	})
	return id, token, err
}

// dropReservation deletes the uncommitted entry id in tx and, once tx
// committed, the chunks and blocks it staged.
func (s *Service) dropReservation(ctx context.Context, tx *store.Tx, id int64) error {
	keys, err := cacheBlobKeys(ctx, tx, id)
	if err != nil {
		return err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM actions_caches WHERE id = $1`, id); err != nil {
		return err
	}
	tx.AfterCommit(func() { _ = s.deleteBlobs(context.WithoutCancel(ctx), keys) })
	return nil
}

// cacheBlobKeys are the blob keys of the entry id: its archive, its v1
// chunks and its v2 staged blocks.
func cacheBlobKeys(ctx context.Context, q store.Q, id int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT start_offset FROM actions_cache_chunks WHERE cache_id = $1`, id)
	starts, err := store.ScanAll(rows, err, store.ScanID)
	if err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT block_id FROM actions_cache_blocks WHERE cache_id = $1`, id)
	blocks, err := store.ScanAll(rows, err, scanString)
	if err != nil {
		return nil, err
	}
	keys := []string{cacheKey(id)}
	for _, st := range starts {
		keys = append(keys, cacheChunkKey(id, st))
	}
	for _, b := range blocks {
		keys = append(keys, blockKey("caches", id, b))
	}
	return keys, nil
}

func scanString(row store.Scanner) (string, error) {
	var v string
	return v, row.Scan(&v)
}

// finalizeCache makes the caller's reserved entry readable once its
// archive was uploaded.
func (s *Service) finalizeCache(ctx context.Context, c *runtimeCaller, key, version string, size int64) (int64, error) {
	ref, _, err := s.cacheRefs(ctx, c)
	if err != nil {
		return 0, err
	}
	e, err := scanCache(s.DB.QueryRowContext(ctx, `SELECT `+cacheColumns+` FROM actions_caches
		WHERE repository_id = $1 AND ref = $2 AND cache_key = $3 AND version = $4 AND NOT finalized`, c.RepoID, ref, key, version))
	if err != nil {
		return 0, err
	}
	rc, err := s.Blobs.Open(ctx, cacheKey(e.ID))
	if err != nil {
		return 0, store.ErrNotFound // nothing was uploaded
	}
	_ = rc.Close()
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE actions_caches SET finalized = TRUE, upload_token_hash = '',
			size_in_bytes = CASE WHEN size_in_bytes > 0 THEN size_in_bytes ELSE $1 END WHERE id = $2`, size, e.ID)
		if err != nil {
			return err
		}
		return s.evictToLimit(ctx, tx, c.RepoID, e.ID)
	})
	return e.ID, store.Normalize(err)
}

// lookupCache finds the entry a restore takes: on each of the caller's
// refs in turn, the key exactly, then the newest entry whose key starts
// with a restore key (in their order); the version must match. It marks
// the entry accessed.
func (s *Service) lookupCache(ctx context.Context, c *runtimeCaller, key string, restoreKeys []string, version string) (*Cache, error) {
	_, refs, err := s.cacheRefs(ctx, c)
	if err != nil {
		return nil, err
	}
	for _, ref := range refs {
		e, err := s.findCache(ctx, c.RepoID, ref, version, key, true)
		for i := 0; errors.Is(err, store.ErrNotFound) && i < len(restoreKeys); i++ {
			e, err = s.findCache(ctx, c.RepoID, ref, version, restoreKeys[i], false)
		}
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		_, err = s.DB.ExecContext(ctx, `UPDATE actions_caches SET last_accessed_at = $1 WHERE id = $2`, store.Now(), e.ID)
		return e, err
	}
	return nil, store.ErrNotFound
}

// findCache is the newest finalized entry of the ref and version whose
// key is key (exact) or starts with it.
func (s *Service) findCache(ctx context.Context, repoID int64, ref, version, key string, exact bool) (*Cache, error) {
	if key == "" {
		return nil, store.ErrNotFound
	}
	cond := `cache_key = $4`
	arg := key
	if !exact {
		cond, arg = `cache_key LIKE $4 ESCAPE '\'`, likePrefix(key)
	}
	return scanCache(s.DB.QueryRowContext(ctx, `SELECT `+cacheColumns+` FROM actions_caches WHERE repository_id = $1 AND ref = $2
		AND version = $3 AND finalized AND `+cond+` ORDER BY created_at DESC, id DESC LIMIT 1`, repoID, ref, version, arg))
}

// likePrefix is a LIKE pattern of the strings starting with p.
func likePrefix(p string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(p) + "%"
}

// DeleteCaches deletes the repository's entries of the ids and their
// archives.
func (s *Service) DeleteCaches(ctx context.Context, repoID int64, ids []int64) error {
	for _, id := range ids {
		if _, err := s.DB.ExecContext(ctx, `DELETE FROM actions_caches WHERE repository_id = $1 AND id = $2`, repoID, id); err != nil {
			return err
		}
		if s.Blobs != nil {
			if err := s.Blobs.Delete(ctx, cacheKey(id)); err != nil {
				return err
			}
		}
	}
	return nil
}

// CacheUsage is the count and total size of a repository's finalized
// caches.
type CacheUsage struct {
	RepoID int64
	Count  int64
	Size   int64
}

// CacheUsageOf is the caches' usage of each repository of the owner that
// has caches, by repository id.
func CacheUsageOf(ctx context.Context, q store.Q, ownerIDs []int64) ([]CacheUsage, error) {
	var out []CacheUsage
	for _, owner := range ownerIDs {
		rows, err := q.QueryContext(ctx, `SELECT c.repository_id, COUNT(*), COALESCE(SUM(c.size_in_bytes), 0) FROM actions_caches c
			JOIN repositories r ON r.id = c.repository_id WHERE r.owner_id = $1 AND c.finalized GROUP BY c.repository_id ORDER BY c.repository_id`, owner)
		list, err := store.ScanAll(rows, err, func(row store.Scanner) (CacheUsage, error) {
			var u CacheUsage
			return u, row.Scan(&u.RepoID, &u.Count, &u.Size)
		})
		if err != nil {
			return nil, err
		}
		out = append(out, list...)
	}
	return out, nil
}
