package actions

import (
	"context"
	"database/sql"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The cache usage policies of the self-managed edition: a repository's
// limit of its committed caches' total size, and an enterprise's default
// and maximum of its repositories' limits, all in whole gigabytes. A
// repository without a policy takes its enterprise's default (a
// repository outside an enterprise, or of an enterprise without a
// policy, the server's: Service.CacheLimit, 10 GB unless configured);
// the maximum is 25 GB unless the enterprise sets it. Lowering a limit
// evicts the repositories' least recently used entries down to it in
// the same transaction (evictOver), so that the usage the API shows next
// is within the limit.

// DefaultCacheLimitGB is a repository's cache limit without
// Service.CacheLimit or a policy: 10 GB, the platform's.
const DefaultCacheLimitGB = 10

// DefaultMaxCacheLimitGB is the most a repository's cache limit may be
// without an enterprise policy saying otherwise: 25 GB, the platform's.
const DefaultMaxCacheLimitGB = 25

// The rules of the cache usage policies: a repository's is read with
// Actions read access and set by its administrators; an enterprise's by
// its owners (admin:enterprise), as its other Actions settings.
var (
	readCachePolicy = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Scopes: []string{"repo"},
		Permissions: auth.Perm("actions:read"), TokenTypes: auth.AllTokenTypes}
	writeCachePolicy = auth.Rule{Target: auth.TargetRepo, Role: auth.RoleAdmin, Scopes: []string{"repo"},
		Permissions: auth.Perm("administration:write"), TokenTypes: auth.AllTokenTypes}
	enterpriseCachePolicy = auth.Rule{Target: auth.TargetEnterprise, Role: auth.RoleAdmin, Scopes: []string{"admin:enterprise"}}
)

// cachePolicyRoutes are the repositories' and enterprises' cache usage
// policies.
func (h *Handler) cachePolicyRoutes() []httpapi.Route {
	const repo = "/repos/{owner}/{repo}/actions/cache/usage-policy"
	const ent = "/enterprises/{enterprise}/actions/cache/usage-policy"
	return []httpapi.Route{
		{Method: http.MethodGet, Pattern: repo, Handle: h.getRepoCachePolicy, Auth: readCachePolicy},
		{Method: http.MethodPatch, Pattern: repo, Handle: h.setRepoCachePolicy, Auth: writeCachePolicy},
		{Method: http.MethodGet, Pattern: ent, Handle: h.getEnterpriseCachePolicy, Auth: enterpriseCachePolicy},
		{Method: http.MethodPatch, Pattern: ent, Handle: h.setEnterpriseCachePolicy, Auth: enterpriseCachePolicy},
	}
}

// cacheGB is how many bytes a gigabyte of the policies counts:
// Service.CacheGB, 1 GiB unless set (tests make it small).
func (s *Service) cacheGB() int64 {
	if s.CacheGB > 0 {
		return s.CacheGB
	}
	return 1 << 30
}

// inGB is n bytes in whole gigabytes, rounded up.
func (s *Service) inGB(n int64) int64 {
	gb := s.cacheGB()
	return (n + gb - 1) / gb
}

// cacheBounds are, in bytes, the limit of a repository without its own
// policy and the most a repository's policy may set.
type cacheBounds struct{ Default, Max int64 }

// bounds are the bounds of an enterprise's policy columns (NULL: the
// server's).
func (s *Service) bounds(limitGB, maxGB sql.NullInt64) cacheBounds {
	b := cacheBounds{Default: s.CacheLimit, Max: DefaultMaxCacheLimitGB * s.cacheGB()}
	if b.Default <= 0 {
		b.Default = DefaultCacheLimitGB * s.cacheGB()
	}
	if limitGB.Valid {
		b.Default = limitGB.Int64 * s.cacheGB()
	}
	if maxGB.Valid {
		b.Max = maxGB.Int64 * s.cacheGB()
	}
	return b
}

// enterpriseBounds are the bounds the enterprise entID (0: none) sets.
func (s *Service) enterpriseBounds(ctx context.Context, q store.Q, entID int64) (cacheBounds, error) {
	var limitGB, maxGB sql.NullInt64
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT limit_gb, max_limit_gb FROM actions_enterprise_cache_policies
		WHERE enterprise_id = $1`, entID).Scan(&limitGB, &maxGB))
	if err != nil && err != store.ErrNotFound {
		return cacheBounds{}, err
	}
	return s.bounds(limitGB, maxGB), nil
}

// repoCachePolicy is the repository's own limit in gigabytes (invalid
// when it has none) and its enterprise's bounds.
func (s *Service) repoCachePolicy(ctx context.Context, q store.Q, repoID int64) (sql.NullInt64, cacheBounds, error) {
	var own, limitGB, maxGB sql.NullInt64
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT p.limit_gb, e.limit_gb, e.max_limit_gb FROM repositories r
		LEFT JOIN actions_repo_cache_policies p ON p.repository_id = r.id
		LEFT JOIN enterprise_orgs eo ON eo.org_id = r.owner_id
		LEFT JOIN actions_enterprise_cache_policies e ON e.enterprise_id = eo.enterprise_id
		WHERE r.id = $1`, repoID).Scan(&own, &limitGB, &maxGB))
	return own, s.bounds(limitGB, maxGB), err
}

// RepoCacheLimit is how many bytes of committed caches the repository
// keeps: its own policy's limit (no more than its enterprise's maximum),
// else its enterprise's default, else the server's.
func (s *Service) RepoCacheLimit(ctx context.Context, q store.Q, repoID int64) (int64, error) {
	own, b, err := s.repoCachePolicy(ctx, q, repoID)
	if err != nil {
		return 0, err
	}
	if own.Valid {
		return min(own.Int64*s.cacheGB(), b.Max), nil
	}
	return min(b.Default, b.Max), nil
}

// evictOver deletes in tx the repository's committed entries, least
// recently used first (the last read, or the commit) but the entry keep
// (0: none), while their total size is over limit, as the platform
// evicts; their blobs are deleted once tx committed. It returns how many
// it deleted.
func (s *Service) evictOver(ctx context.Context, tx *store.Tx, repoID, keep, limit int64) (int, error) {
	type entry struct{ id, size int64 }
	rows, err := tx.QueryContext(ctx, `SELECT id, size_in_bytes FROM actions_caches WHERE repository_id = $1 AND finalized
		ORDER BY last_accessed_at, id`, repoID)
	list, err := store.ScanAll(rows, err, func(row store.Scanner) (entry, error) {
		var e entry
		return e, row.Scan(&e.id, &e.size)
	})
	if err != nil {
		return 0, err
	}
	var total int64
	for _, e := range list {
		total += e.size
	}
	var keys []string
	n := 0
	for _, e := range list {
		if total <= limit {
			break
		}
		if e.id == keep {
			continue
		}
		k, err := cacheBlobKeys(ctx, tx, e.id)
		if err != nil {
			return 0, err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM actions_caches WHERE id = $1`, e.id); err != nil {
			return 0, err
		}
		keys, total, n = append(keys, k...), total-e.size, n+1
	}
	if len(keys) > 0 {
		tx.AfterCommit(func() { _ = s.deleteBlobs(context.WithoutCancel(ctx), keys) })
	}
	return n, nil
}

// evictToLimit evicts in tx the repository's entries over its effective
// limit.
func (s *Service) evictToLimit(ctx context.Context, tx *store.Tx, repoID, keep int64) error {
	limit, err := s.RepoCacheLimit(ctx, tx, repoID)
	if err != nil {
		return err
	}
	_, err = s.evictOver(ctx, tx, repoID, keep, limit)
	return err
}

// repoCachePolicyJSON is actions-cache-usage-policy-for-repository.
type repoCachePolicyJSON struct {
	RepoCacheSizeLimitInGB *int64 `json:"repo_cache_size_limit_in_gb"`
}

// enterpriseCachePolicyJSON is actions-cache-usage-policy-enterprise.
type enterpriseCachePolicyJSON struct {
	RepoCacheSizeLimitInGB    *int64 `json:"repo_cache_size_limit_in_gb"`
	MaxRepoCacheSizeLimitInGB *int64 `json:"max_repo_cache_size_limit_in_gb"`
}

// getRepoCachePolicy answers GET .../actions/cache/usage-policy: the
// repository's limit in gigabytes (its enterprise's or the server's
// default when it set none, rounded up).
func (h *Handler) getRepoCachePolicy(w http.ResponseWriter, r *http.Request) error {
	limit, err := h.Service.RepoCacheLimit(r.Context(), h.Service.DB, repos.From(r.Context()).ID)
	if err != nil {
		return err
	}
	gb := h.Service.inGB(limit)
	httpapi.WriteJSON(w, http.StatusOK, repoCachePolicyJSON{RepoCacheSizeLimitInGB: &gb})
	return nil
}

// setRepoCachePolicy answers PATCH .../actions/cache/usage-policy: 204;
// a limit under 1 or over the enterprise's maximum is a 422. The
// repository's entries over the new limit are evicted at once.
func (h *Handler) setRepoCachePolicy(w http.ResponseWriter, r *http.Request) error {
	var body repoCachePolicyJSON
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	const resource, field = "ActionsCacheUsagePolicy", "repo_cache_size_limit_in_gb"
	if body.RepoCacheSizeLimitInGB == nil {
		return apierr.Invalid(resource, field, apierr.CodeMissingField)
	}
	limit := *body.RepoCacheSizeLimitInGB
	repoID := repos.From(r.Context()).ID
	s := h.Service
	err := s.DB.Tx(r.Context(), func(tx *store.Tx) error {
		_, b, err := s.repoCachePolicy(r.Context(), tx, repoID)
		if err != nil {
			return err
		}
		if max := s.inGB(b.Max); limit < 1 || limit > max {
			return apierr.Custom(resource, field, "%s must be between 1 and %d (the enterprise's maximum)", field, max)
		}
		if _, err := tx.ExecContext(r.Context(), `INSERT INTO actions_repo_cache_policies (repository_id, limit_gb, updated_at)
			VALUES ($1, $2, $3) ON CONFLICT (repository_id) DO UPDATE SET limit_gb = excluded.limit_gb, updated_at = excluded.updated_at`,
			repoID, limit, tx.Now()); err != nil {
			return err
		}
		return s.evictToLimit(r.Context(), tx, repoID, 0)
	})
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// getEnterpriseCachePolicy answers GET
// /enterprises/{enterprise}/actions/cache/usage-policy: the default and
// maximum of its repositories' limits in gigabytes (rounded up).
func (h *Handler) getEnterpriseCachePolicy(w http.ResponseWriter, r *http.Request) error {
	b, err := h.Service.enterpriseBounds(r.Context(), h.Service.DB, accounts.EnterpriseFrom(r.Context()).ID)
	if err != nil {
		return err
	}
	def, max := h.Service.inGB(b.Default), h.Service.inGB(b.Max)
	httpapi.WriteJSON(w, http.StatusOK, enterpriseCachePolicyJSON{RepoCacheSizeLimitInGB: &def, MaxRepoCacheSizeLimitInGB: &max})
	return nil
}

// setEnterpriseCachePolicy answers PATCH
// /enterprises/{enterprise}/actions/cache/usage-policy: 204; a field
// left out keeps its value; a value under 1, or a default over the
// maximum, is a 422. Every repository of the enterprise's organizations
// is evicted down to its limit at once.
func (h *Handler) setEnterpriseCachePolicy(w http.ResponseWriter, r *http.Request) error {
	var body enterpriseCachePolicyJSON
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	const resource = "ActionsCacheUsagePolicy"
	var fields apierr.Fields
	for name, v := range map[string]*int64{"repo_cache_size_limit_in_gb": body.RepoCacheSizeLimitInGB,
		"max_repo_cache_size_limit_in_gb": body.MaxRepoCacheSizeLimitInGB} {
		if v != nil && *v < 1 {
			fields.Addf(resource, name, "%s must be at least 1", name)
		}
	}
	if err := fields.Err(); err != nil {
		return err
	}
	entID := accounts.EnterpriseFrom(r.Context()).ID
	s := h.Service
	err := s.DB.Tx(r.Context(), func(tx *store.Tx) error {
		b, err := s.enterpriseBounds(r.Context(), tx, entID)
		if err != nil {
			return err
		}
		def, max := s.inGB(b.Default), s.inGB(b.Max)
		if body.RepoCacheSizeLimitInGB != nil {
			def = *body.RepoCacheSizeLimitInGB
		}
		if body.MaxRepoCacheSizeLimitInGB != nil {
			max = *body.MaxRepoCacheSizeLimitInGB
		}
		if def > max {
			return apierr.Custom(resource, "repo_cache_size_limit_in_gb",
				"repo_cache_size_limit_in_gb (%d) must not be over max_repo_cache_size_limit_in_gb (%d)", def, max)
		}
		if err := s.saveEnterpriseCachePolicy(r.Context(), tx, entID, body); err != nil {
			return err
		}
		return s.evictEnterprise(r.Context(), tx, entID)
	})
	if err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// saveEnterpriseCachePolicy writes the fields of body that are set.
func (s *Service) saveEnterpriseCachePolicy(ctx context.Context, tx *store.Tx, entID int64, body enterpriseCachePolicyJSON) error {
	_, err := tx.ExecContext(ctx, `INSERT INTO actions_enterprise_cache_policies (enterprise_id, limit_gb, max_limit_gb, updated_at)
		VALUES ($1, $2, $3, $4) ON CONFLICT (enterprise_id) DO UPDATE SET
		limit_gb = COALESCE(excluded.limit_gb, actions_enterprise_cache_policies.limit_gb),
		max_limit_gb = COALESCE(excluded.max_limit_gb, actions_enterprise_cache_policies.max_limit_gb),
		updated_at = excluded.updated_at`, entID, body.RepoCacheSizeLimitInGB, body.MaxRepoCacheSizeLimitInGB, tx.Now())
	return err
}

// evictEnterprise evicts in tx every repository of the enterprise's
// organizations that has caches down to its limit.
func (s *Service) evictEnterprise(ctx context.Context, tx *store.Tx, entID int64) error {
	rows, err := tx.QueryContext(ctx, `SELECT DISTINCT c.repository_id FROM actions_caches c
		JOIN repositories r ON r.id = c.repository_id JOIN enterprise_orgs eo ON eo.org_id = r.owner_id
		WHERE eo.enterprise_id = $1 AND c.finalized ORDER BY c.repository_id`, entID)
	ids, err := store.ScanAll(rows, err, store.ScanID)
	if err != nil {
		return err
	}
	for _, id := range ids {
		if err := s.evictToLimit(ctx, tx, id, 0); err != nil {
			return err
		}
	}
	return nil
}
