package repos

import (
	"context"

	"forgeapi/internal/httpapi"
)

type repoKey struct{}

// WithRepo returns a context carrying the {owner}/{repo} target (in the
// request's own context while the guard checks it: httpapi.WithTargetValue).
func WithRepo(ctx context.Context, r *Repository) context.Context {
	return httpapi.WithTargetValue(ctx, repoKey{}, r)
}

// From returns the {owner}/{repo} target the access guard resolved.
func From(ctx context.Context) *Repository { r, _ := ctx.Value(repoKey{}).(*Repository); return r }
