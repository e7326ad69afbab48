package actions

import (
	"context"
	"errors"

	"forgeapi/internal/store"
)

// cacheMethods are the methods of the results service's CacheService
// (cache v2, as @actions/cache calls it with ACTIONS_CACHE_SERVICE_V2).
func (s *Service) cacheMethods() map[string]twirpMethod {
	return map[string]twirpMethod{
		"CreateCacheEntry":         s.twirpCreateCache,
		"FinalizeCacheEntryUpload": s.twirpFinalizeCache,
		"GetCacheEntryDownloadURL": s.twirpCacheDownloadURL,
	}
}

// cacheRef is the part every CacheService request shares.
type cacheRef struct {
	Key     string `json:"key"`
	Version string `json:"version"`
}

func (s *Service) twirpCreateCache(ctx context.Context, c *runtimeCaller, body []byte) (any, error) {
	var req cacheRef
	if err := decodeTwirp(body, &req); err != nil {
		return nil, err
	}
	if req.Key == "" || req.Version == "" {
		return nil, twirpInvalid("key and version are required")
	}
	id, token, err := s.createCache(ctx, c, req.Key, req.Version)
	if errors.Is(err, errCacheExists) {
		return nil, &twirpError{409, "already_exists", "cache entry with the same key, version, and scope already exists"}
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "signedUploadUrl": s.uploadURL(ctx, "caches", id, token)}, nil
}

func (s *Service) twirpFinalizeCache(ctx context.Context, c *runtimeCaller, body []byte) (any, error) {
	var req struct {
		cacheRef
		SizeBytes int64String `json:"size_bytes"`
	}
	if err := decodeTwirp(body, &req); err != nil {
		return nil, err
	}
	id, err := s.finalizeCache(ctx, c, req.Key, req.Version, int64(req.SizeBytes))
	if errors.Is(err, store.ErrNotFound) {
		return nil, twirpNotFound("no reserved cache entry of the key and version was uploaded")
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "entryId": int64String(id)}, nil
}

func (s *Service) twirpCacheDownloadURL(ctx context.Context, c *runtimeCaller, body []byte) (any, error) {
	var req struct {
		cacheRef
		RestoreKeys []string `json:"restore_keys"`
	}
	if err := decodeTwirp(body, &req); err != nil {
		return nil, err
	}
	e, err := s.lookupCache(ctx, c, req.Key, req.RestoreKeys, req.Version)
	if errors.Is(err, store.ErrNotFound) {
		return map[string]any{"ok": false, "signedDownloadUrl": "", "matchedKey": ""}, nil
	}
	if err != nil {
		return nil, err
	}
	u, err := s.Blobs.URL(ctx, cacheKey(e.ID), cacheSignedURLTTL)
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "signedDownloadUrl": reachedURL(ctx, s.BaseURL, u), "matchedKey": e.Key}, nil
}
