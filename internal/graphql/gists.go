package graphql

import (
	"cmp"
	"context"
	"path"
	"slices"
	"strings"
	"unicode/utf8"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/auth"
	"forgeapi/internal/gists"
	"forgeapi/internal/httpapi"
)

// maxGists bounds the gists User.gists reads to order and page them.
const maxGists = 10000

// gistOrder is the GistOrder input.
type gistOrder struct {
	Field     string
	Direction string
}

// gistsArgs are the arguments of User.gists.
type gistsArgs struct {
	connectionArgs
	OrderBy *gistOrder
	Privacy *string
}

// Gists are the user's gists (gh gist list): PUBLIC by default; ALL and
// SECRET show secret gists only to the user themself (a permission-based
// token needs the Gists permission), as REST lists them. Newest first by
// creation unless orderBy says otherwise (CREATED_AT, UPDATED_AT or
// PUSHED_AT, which is the last change too).
func (r *userResolver) Gists(ctx context.Context, args gistsArgs) (*connection[*gistResolver], error) {
	if err := args.checkCounted("gists"); err != nil {
		return nil, err
	}
	p := requestFrom(ctx).principal
	own := r.a.ID == p.UserID() && (!p.FineGrained() || p.Token.Grant.Has(auth.Need{Name: "gists", Level: auth.Read}))
	privacy := "PUBLIC"
	if args.Privacy != nil {
		privacy = *args.Privacy
	}
	list, _, err := gists.List(ctx, r.h.DB, gists.ListFilter{Owner: r.a.ID, Secret: own && privacy != "PUBLIC", Limit: maxGists})
	if err != nil {
		return nil, err
	}
	if privacy == "SECRET" {
		list = slices.DeleteFunc(list, func(g *gists.Gist) bool { return g.Public })
	}
	sortGists(list, args.OrderBy)
	out := make([]*gistResolver, len(list))
	for i, g := range list {
		out[i] = &gistResolver{h: r.h, g: g}
	}
	return pageList(out, args.connectionArgs, "gists")
}

// sortGists orders the gists as orderBy asks; nil is CREATED_AT DESC.
func sortGists(list []*gists.Gist, o *gistOrder) {
	byUpdate := o != nil && o.Field != "CREATED_AT"
	slices.SortStableFunc(list, func(a, b *gists.Gist) int {
		if byUpdate {
			return cmp.Or(a.UpdatedAt.Compare(b.UpdatedAt), cmp.Compare(a.ID, b.ID))
		}
		return cmp.Or(a.CreatedAt.Compare(b.CreatedAt), cmp.Compare(a.ID, b.ID))
	})
	if o == nil || o.Direction != "ASC" {
		slices.Reverse(list)
	}
}

// gistNode resolves a gist's node id: anyone sees a gist by its id, as
// REST shows it.
func (h *Handler) gistNode(ctx context.Context, id int64) (*nodeResolver, error) {
	g, err := gists.ByID(ctx, h.DB, id)
	if err != nil {
		return nil, err
	}
	return &nodeResolver{&gistResolver{h: h, g: g}}, nil
}

func (n *nodeResolver) ToGist() (*gistResolver, bool) {
	g, ok := n.node.(*gistResolver)
	return g, ok
}

// gistResolver resolves Gist.
type gistResolver struct {
	h *Handler
	g *gists.Gist
}

func (r *gistResolver) ID() gql.ID            { return gql.ID(gists.NodeID(r.g)) }
func (r *gistResolver) Name() string          { return r.g.Name }
func (r *gistResolver) Description() *string  { return r.g.Description }
func (r *gistResolver) IsPublic() bool        { return r.g.Public }
func (r *gistResolver) IsFork() bool          { return r.g.ForkOfID != 0 }
func (r *gistResolver) CreatedAt() dateTime   { return at(r.g.CreatedAt) }
func (r *gistResolver) UpdatedAt() dateTime   { return at(r.g.UpdatedAt) }
func (r *gistResolver) ResourcePath() uri     { return uri("/gist/" + r.g.Name) }
func (r *gistResolver) Owner() *ownerResolver { return r.h.owner(r.g.Owner) }

// PushedAt is the gist's last change: an edit or a push.
func (r *gistResolver) PushedAt() *dateTime { t := at(r.g.UpdatedAt); return &t }

// URL is the gist's web address.
func (r *gistResolver) URL(ctx context.Context) uri {
	return uri(httpapi.WebBase(requestFrom(ctx).base) + "/gist/" + r.g.Name)
}

// StargazerCount counts the gist's stars.
func (r *gistResolver) StargazerCount(ctx context.Context) (int32, error) {
	n, err := gists.StarCount(ctx, r.h.DB, r.g)
	return int32(n), err
}

// ViewerHasStarred reports whether the caller stars the gist.
func (r *gistResolver) ViewerHasStarred(ctx context.Context) (bool, error) {
	userID := requestFrom(ctx).principal.UserID()
	if userID == 0 {
		return false, nil
	}
	return gists.Starred(ctx, r.h.DB, r.g, userID)
}

// gistFilesArgs are the arguments of Gist.files.
type gistFilesArgs struct {
	Limit int32 // the schema's default is 10
	Oid   *string
}

// Files are the gist's files at its tip, or at the commit oid of its
// history, by name, at most limit of them.
func (r *gistResolver) Files(ctx context.Context, args gistFilesArgs) (*[]*gistFileResolver, error) {
	rev := "HEAD"
	if args.Oid != nil {
		rev = *args.Oid
	}
	files, err := gists.Files(r.h.Gists.Dir(r.g.Name), rev, true)
	if err != nil {
		return nil, notFound("Could not resolve to a revision of the gist: " + rev)
	}
	limit := max(int(args.Limit), 0)
	out := make([]*gistFileResolver, 0, min(limit, len(files)))
	for _, f := range files[:min(limit, len(files))] {
		out = append(out, &gistFileResolver{f: f})
	}
	return &out, nil
}

// gistFileResolver resolves GistFile.
type gistFileResolver struct{ f gists.File }

func (r *gistFileResolver) Name() *string        { return &r.f.Name }
func (r *gistFileResolver) EncodedName() *string { return &r.f.Name }
func (r *gistFileResolver) IsTruncated() bool    { return len(r.f.Content) > gists.MaxContent }
func (r *gistFileResolver) Size() *int32         { n := int32(r.f.Size); return &n }

// Extension is the file name's extension with its dot, nil without one.
func (r *gistFileResolver) Extension() *string { return optional(path.Ext(r.f.Name)) }

// IsImage reports whether the file is an image, by its extension.
func (r *gistFileResolver) IsImage() bool {
	switch strings.ToLower(path.Ext(r.f.Name)) {
	case ".png", ".jpg", ".jpeg", ".gif", ".svg", ".webp", ".bmp", ".ico":
		return true
	}
	return false
}

// textArgs are the arguments of GistFile.text.
type textArgs struct{ Truncate *int32 }

// Text is the file's content (cut at truncate bytes, and at
// gists.MaxContent), nil for a binary one.
func (r *gistFileResolver) Text(args textArgs) *string {
	content := r.f.Content
	if len(content) > gists.MaxContent {
		content = content[:gists.MaxContent]
	}
	if args.Truncate != nil && int(*args.Truncate) < len(content) {
		content = content[:max(int(*args.Truncate), 0)]
	}
	if !utf8.Valid(content) {
		return nil
	}
	s := string(content)
	return &s
}
