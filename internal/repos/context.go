package repos

import "context"

type repoKey struct{}

// WithRepo returns a context carrying the {owner}/{repo} target.
func WithRepo(ctx context.Context, r *Repository) context.Context {
	return context.WithValue(ctx, repoKey{}, r)
}

// From returns the {owner}/{repo} target the access guard resolved.
func From(ctx context.Context) *Repository { r, _ := ctx.Value(repoKey{}).(*Repository); return r }
