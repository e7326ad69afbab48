package graphql

import (
	"context"
	"slices"
	"strings"
	"time"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
)

// refResolver resolves Ref: a reference of the repository, its full name
// split into prefix ("refs/heads/") and name, and the object it points
// at.
type refResolver struct {
	repo         *repositoryResolver
	name, prefix string
	sha          string
}

// newRef is the reference full (a full name) of repo pointing at sha,
// named relative to prefix when it starts with it, else to the
// namespace of refs/heads/, refs/tags/ or the like.
func newRef(repo *repositoryResolver, full, prefix, sha string) *refResolver {
	if prefix == "" || !strings.HasPrefix(full, prefix) {
		prefix = full[:strings.Index(full[len("refs/"):], "/")+len("refs/")+1]
	}
	return &refResolver{repo: repo, name: strings.TrimPrefix(full, prefix), prefix: prefix, sha: sha}
}

// ID is the REST node_id of the reference (GET .../git/ref/{ref}).
func (r *refResolver) ID() gql.ID { return gql.ID(gitjson.RefNodeID(r.repo.r.ID, r.prefix+r.name)) }

func (r *refResolver) Name() string                    { return r.name }
func (r *refResolver) Prefix() string                  { return r.prefix }
func (r *refResolver) Repository() *repositoryResolver { return r.repo }

// Target is the object the reference points at: a commit, a tree, a
// blob or an annotated tag.
func (r *refResolver) Target() (*gitObjectResolver, error) {
	return r.repo.object(r.sha, "")
}

// mayReadContents reports whether credentials that see the repository
// read its git data: a fine-grained or installation token reads a
// private one's only with Contents read (REST's rule for the contents
// and git database routes).
func mayReadContents(p *auth.Principal, repo *repos.Repository) bool {
	if p.FineGrained() && repo.Private {
		return p.Token.Selects(repo.ID, repo.Owner.ID) && p.Token.Grant.Satisfies(auth.Perm("contents:read"))
	}
	return true
}

// checkContents is FORBIDDEN when the caller may not read the
// repository's git data (mayReadContents).
func (r *repositoryResolver) checkContents(ctx context.Context) error {
	if p := requestFrom(ctx).principal; !mayReadContents(p, r.r) {
		return forbidden(httpapi.NotAccessibleMessage(p.Token.Kind))
	}
	return nil
}

// refNamed is the repository's reference of that full name (under
// refs/), null when there is none or git refuses the name (a branch's
// short name "", as gh issue develop asks ref(qualifiedName: "") when no
// --base is given).
func (r *repositoryResolver) refNamed(full string) (*refResolver, error) {
	if !strings.HasPrefix(full, "refs/") || !gitref.ValidName(full) {
		return nil, nil
	}
	g, err := gitread.Open(r.h.Repos.GitDir(r.r.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	sha, ok, err := g.RefTarget(full)
	if err != nil || !ok {
		return nil, err
	}
	return newRef(r, full, "", sha), nil
}

// qualifiedNameArgs are the argument of Repository.ref.
type qualifiedNameArgs struct{ QualifiedName string }

// Ref is the reference of that name: a full name (refs/heads/main)
// first, then a branch's or tag's short name, as the platform looks
// them up; null when none. Refs, Ref and Object are FORBIDDEN to
// credentials that may not read the repository's contents.
func (r *repositoryResolver) Ref(ctx context.Context, args qualifiedNameArgs) (*refResolver, error) {
	if err := r.checkContents(ctx); err != nil {
		return nil, err
	}
	name := args.QualifiedName
	candidates := []string{"refs/heads/" + name, "refs/tags/" + name}
	if strings.HasPrefix(name, "refs/") {
		candidates = append([]string{name}, candidates...)
	}
	for _, full := range candidates {
		ref, err := r.refNamed(full)
		if ref != nil || err != nil {
			return ref, err
		}
	}
	return nil, nil
}

// refsArgs are the arguments of Repository.refs.
type refsArgs struct {
	connectionArgs
	RefPrefix string
	Query     *string
	OrderBy   *refOrder
	Direction *string
}

// refOrder is the RefOrder input.
type refOrder struct {
	Field     string
	Direction string
}

// Refs are the repository's references under refPrefix (which ends with
// a slash, as the platform requires), named relative to it; query keeps
// those whose name contains it (any case). Ordered by name (ALPHABETICAL)
// or, for tags, by their commit's date (TAG_COMMIT_DATE), ascending
// unless orderBy or the deprecated direction says DESC.
func (r *repositoryResolver) Refs(ctx context.Context, args refsArgs) (*connection[*refResolver], error) {
	if err := args.checkCounted("refs"); err != nil {
		return nil, err
	}
	if err := r.checkContents(ctx); err != nil {
		return nil, err
	}
	if !strings.HasPrefix(args.RefPrefix, "refs/") || !strings.HasSuffix(args.RefPrefix, "/") {
		return nil, invalid("refPrefix must start with \"refs/\" and end with a slash, as \"refs/heads/\".")
	}
	g, err := gitread.Open(r.h.Repos.GitDir(r.r.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	infos, err := g.Refs(args.RefPrefix)
	if err != nil {
		return nil, err
	}
	var list []*refResolver
	dates := map[string]time.Time{}
	for _, info := range infos {
		ref := newRef(r, info.Name, args.RefPrefix, info.SHA)
		if args.Query != nil && !containsFold(ref.name, *args.Query) {
			continue
		}
		list = append(list, ref)
		if args.OrderBy != nil && args.OrderBy.Field == "TAG_COMMIT_DATE" {
			if c, err := g.CommitMeta(info.Name); err == nil {
				dates[info.SHA] = c.CommitterDate
			}
		}
	}
	if args.OrderBy != nil && args.OrderBy.Field == "TAG_COMMIT_DATE" {
		slices.SortStableFunc(list, func(a, b *refResolver) int { return dates[a.sha].Compare(dates[b.sha]) })
	}
	if args.OrderBy != nil && args.OrderBy.Direction == "DESC" || args.OrderBy == nil && args.Direction != nil && *args.Direction == "DESC" {
		slices.Reverse(list)
	}
	return pageList(list, args.connectionArgs, "refs")
}
