package graphql

import (
	"context"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos/gitjson"
)

// tagResolver resolves Tag: an annotated tag object of the repository,
// read when it was found.
type tagResolver struct {
	repo *repositoryResolver
	t    gitread.TagObject
}

// annotatedTag is the repository's annotated tag object sha, read with
// g; null when there is no such tag object.
func (r *repositoryResolver) annotatedTag(g *gitread.Repository, sha string) (*gitObjectResolver, error) {
	t, err := g.AnnotatedTag(sha)
	if isMissing(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &gitObjectResolver{&tagResolver{repo: r, t: t}}, nil
}

// ID is the REST node_id of the tag object (GET .../git/tags/{tag_sha}).
func (t *tagResolver) ID() gql.ID                                              { return gql.ID(gitjson.TagNodeID(t.repo.r.ID, t.t.SHA)) }
func (t *tagResolver) Oid() gitObjectID                                        { return gitObjectID(t.t.SHA) }
func (t *tagResolver) AbbreviatedOid() string                                  { return t.t.SHA[:min(7, len(t.t.SHA))] }
func (t *tagResolver) Repository(context.Context) (*repositoryResolver, error) { return t.repo, nil }

// Name is the tag's name as its object records it.
func (t *tagResolver) Name() string { return t.t.Name }

// Message is the tag's message as git stores it (with its final newline).
func (t *tagResolver) Message() *string { return &t.t.Message }

// Tagger is the tag's tagger with the tagging date, null for a tag
// object without one.
func (t *tagResolver) Tagger() *gitActorResolver {
	if t.t.TaggerName == "" && t.t.TaggerEmail == "" {
		return nil
	}
	return &gitActorResolver{h: t.repo.h, name: t.t.TaggerName, email: t.t.TaggerEmail, date: t.t.TaggerDate}
}

// Target is the object the tag points at: a commit, a tree, a blob or
// another tag.
func (t *tagResolver) Target() (*gitObjectResolver, error) {
	return t.repo.object(t.t.ObjectSHA, "")
}
