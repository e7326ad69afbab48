package actions

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// The cache usage of organizations and enterprises, as the platform
// shows it: organization owners (classic tokens: read:org; fine-grained:
// the organization's Administration read) and enterprise owners
// (admin:enterprise). forgeapi's figures are current, not refreshed
// every five minutes.
var (
	orgCacheUsage = auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"read:org"},
		Permissions: auth.Perm("organization_administration:read"), TokenTypes: auth.AllTokenTypes}
	enterpriseCacheUsage = auth.Rule{Target: auth.TargetEnterprise, Role: auth.RoleAdmin, Scopes: []string{"admin:enterprise"}}
)

// cacheUsageRoutes are the organizations' and enterprises' cache usage.
func (h *Handler) cacheUsageRoutes() []httpapi.Route {
	return []httpapi.Route{
		{Method: http.MethodGet, Pattern: "/orgs/{org}/actions/cache/usage", Handle: h.orgCacheUsage, Auth: orgCacheUsage},
		{Method: http.MethodGet, Pattern: "/orgs/{org}/actions/cache/usage-by-repository", Handle: h.orgCacheUsageByRepo, Auth: orgCacheUsage},
		{Method: http.MethodGet, Pattern: "/enterprises/{enterprise}/actions/cache/usage", Handle: h.enterpriseCacheUsage, Auth: enterpriseCacheUsage},
	}
}

// usageTotals sums the usages.
func usageTotals(list []CacheUsage) map[string]int64 {
	var count, size int64
	for _, u := range list {
		count += u.Count
		size += u.Size
	}
	return map[string]int64{"total_active_caches_count": count, "total_active_caches_size_in_bytes": size}
}

func (h *Handler) orgCacheUsage(w http.ResponseWriter, r *http.Request) error {
	list, err := CacheUsageOf(r.Context(), h.Service.DB, []int64{accounts.OrgFrom(r.Context()).ID})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, usageTotals(list))
	return nil
}

// orgCacheUsageByRepo lists the organization's repositories that have
// caches, with their usage.
func (h *Handler) orgCacheUsageByRepo(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	list, err := CacheUsageOf(r.Context(), h.Service.DB, []int64{org.ID})
	if err != nil {
		return err
	}
	out := []map[string]any{}
	for i, u := range list {
		if i < page.Offset() || len(out) >= page.Limit() {
			continue
		}
		var name string
		if err := h.Service.DB.QueryRowContext(r.Context(), `SELECT name FROM repositories WHERE id = $1`, u.RepoID).Scan(&name); err != nil {
			return store.Normalize(err)
		}
		out = append(out, map[string]any{"full_name": org.Login + "/" + name, "active_caches_size_in_bytes": u.Size,
			"active_caches_count": u.Count})
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": len(list), "repository_cache_usages": out})
	return nil
}

func (h *Handler) enterpriseCacheUsage(w http.ResponseWriter, r *http.Request) error {
	rows, err := h.Service.DB.QueryContext(r.Context(), `SELECT org_id FROM enterprise_orgs WHERE enterprise_id = $1 ORDER BY org_id`,
		accounts.EnterpriseFrom(r.Context()).ID)
	orgs, err := store.ScanAll(rows, err, store.ScanID)
	if err != nil {
		return err
	}
	list, err := CacheUsageOf(r.Context(), h.Service.DB, orgs)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, usageTotals(list))
	return nil
}
