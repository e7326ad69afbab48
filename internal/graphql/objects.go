package graphql

import (
	"bytes"
	"context"
	"errors"
	"path"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
	"forgeapi/internal/store"
)

// gitObject is what every object of the GitObject interface resolves.
type gitObject interface {
	ID() gql.ID
	Oid() gitObjectID
	AbbreviatedOid() string
	Repository(ctx context.Context) (*repositoryResolver, error)
}

// gitObjectResolver resolves GitObject: a commit, a tree, a blob or an
// annotated tag.
type gitObjectResolver struct{ gitObject }

func (o *gitObjectResolver) ToCommit() (*commitResolver, bool) {
	c, ok := o.gitObject.(*commitResolver)
	return c, ok
}

func (o *gitObjectResolver) ToTree() (*treeResolver, bool) {
	t, ok := o.gitObject.(*treeResolver)
	return t, ok
}

func (o *gitObjectResolver) ToBlob() (*blobResolver, bool) {
	b, ok := o.gitObject.(*blobResolver)
	return b, ok
}

func (o *gitObjectResolver) ToTag() (*tagResolver, bool) {
	t, ok := o.gitObject.(*tagResolver)
	return t, ok
}

// objectArgs are the arguments of Repository.object.
type objectArgs struct {
	Expression *string
	Oid        *gitObjectID
}

// Object is the git object oid names, or expression: a full SHA for
// its object, a revision (a branch, a lightweight tag, an abbreviated
// SHA, HEAD) for its commit, an annotated tag's name for the tag object
// (as git rev-parse names it), or REVISION:PATH for the tree or blob at
// PATH in it. Null when it names nothing or a submodule, or is a
// revision expression forgeapi does not read (main~1, main^2).
func (r *repositoryResolver) Object(ctx context.Context, args objectArgs) (*gitObjectResolver, error) {
	if err := r.checkContents(ctx); err != nil {
		return nil, err
	}
	switch {
	case args.Oid != nil:
		return r.object(string(*args.Oid), "")
	case args.Expression == nil:
		return nil, nil
	}
	rev, p, hasPath := strings.Cut(*args.Expression, ":")
	if !hasPath && fullSHA.MatchString(rev) {
		return r.object(rev, "")
	}
	if rev == "" {
		rev = "HEAD"
	}
	g, err := gitread.Open(r.h.Repos.GitDir(r.r.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	if !hasPath {
		return r.revisionCommit(g, rev)
	}
	e, _, err := g.Stat(rev, p)
	switch {
	case isMissing(err):
		return nil, nil
	case err != nil:
		return nil, err
	case e.Type == gitread.EntryDir:
		return &gitObjectResolver{&treeResolver{repo: r, sha: e.SHA, dir: strings.Trim(p, "/")}}, nil
	case e.Type == gitread.EntrySubmodule:
		return nil, nil
	}
	return &gitObjectResolver{&blobResolver{repo: r, sha: e.SHA}}, nil
}

// fullSHA matches a full object name.
var fullSHA = regexp.MustCompile(`^[0-9a-f]{40}$`)

// revisionCommit is the commit rev names, or the annotated tag object
// when rev is the name of one's tag (git's order: a tag before a branch
// of the same name); null when it names nothing.
func (r *repositoryResolver) revisionCommit(g *gitread.Repository, rev string) (*gitObjectResolver, error) {
	tag := rev
	if !strings.HasPrefix(tag, "refs/tags/") {
		tag = "refs/tags/" + rev
	}
	if sha, ok, err := g.RefTarget(tag); err != nil {
		return nil, err
	} else if ok {
		if typ, err := g.ObjectType(sha); err != nil {
			return nil, err
		} else if typ == "tag" {
			return r.annotatedTag(g, sha)
		}
	}
	sha, err := g.Resolve(rev)
	if isMissing(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &gitObjectResolver{r.commit(sha)}, nil
}

// isMissing reports whether a git read failed for a revision or object
// that does not exist.
func isMissing(err error) bool {
	return errors.Is(err, gitread.ErrRevisionNotFound) || errors.Is(err, gitread.ErrPathNotFound)
}

// object is the commit, tree, blob or annotated tag whose full SHA is
// sha (dir is a tree's path in its commit, for its entries' paths); null
// when the repository has no such object.
func (r *repositoryResolver) object(sha, dir string) (*gitObjectResolver, error) {
	g, err := gitread.Open(r.h.Repos.GitDir(r.r.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	typ, err := g.ObjectType(sha)
	if isMissing(err) {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	switch typ {
	case "commit":
		return &gitObjectResolver{r.commit(sha)}, nil
	case "tree":
		return &gitObjectResolver{&treeResolver{repo: r, sha: sha, dir: dir}}, nil
	case "blob":
		return &gitObjectResolver{&blobResolver{repo: r, sha: sha}}, nil
	case "tag":
		return r.annotatedTag(g, sha)
	}
	return nil, nil
}

// commit is the repository's commit sha.
func (r *repositoryResolver) commit(sha string) *commitResolver {
	return &commitResolver{h: r.h, repo: r.r, sha: sha}
}

// ID is the REST node_id of the commit (GET .../commits/{ref}).
func (r *commitResolver) ID() gql.ID { return gql.ID(gitjson.CommitNodeID(r.repo.ID, r.sha)) }

// Repository is the commit's repository as the caller sees it.
func (r *commitResolver) Repository(ctx context.Context) (*repositoryResolver, error) {
	return r.h.visibleRepository(ctx, r.repo)
}

// Author is the commit's author, with the author's date.
func (r *commitResolver) Author() (*gitActorResolver, error) {
	c, err := r.load()
	return &gitActorResolver{h: r.h, name: c.AuthorName, email: c.AuthorEmail, date: c.AuthorDate}, err
}

// Committer is the commit's committer, with the committer's date.
func (r *commitResolver) Committer() (*gitActorResolver, error) {
	c, err := r.load()
	return &gitActorResolver{h: r.h, name: c.CommitterName, email: c.CommitterEmail, date: c.CommitterDate}, err
}

// Parents are the commit's parents, in order; every one when neither
// first nor last is given (a commit has few).
func (r *commitResolver) Parents(args connectionArgs) (*connection[*commitResolver], error) {
	if args.First != nil || args.Last != nil {
		if err := args.check("parents"); err != nil {
			return nil, err
		}
	}
	c, err := r.load()
	if err != nil {
		return nil, err
	}
	parents := make([]*commitResolver, len(c.ParentSHAs))
	for i, sha := range c.ParentSHAs {
		parents[i] = &commitResolver{h: r.h, repo: r.repo, sha: sha}
	}
	return paginate(parents, args)
}

// Tree is the commit's root tree.
func (r *commitResolver) Tree(ctx context.Context) (*treeResolver, error) {
	c, err := r.load()
	if err != nil {
		return nil, err
	}
	repo, err := r.Repository(ctx)
	return &treeResolver{repo: repo, sha: c.TreeSHA}, err
}

// Date is the author's or committer's date.
func (r *gitActorResolver) Date() *gitTimestamp {
	if r.date.IsZero() {
		return nil
	}
	return &gitTimestamp{at(r.date)}
}

// gitTimestamp is the GitTimestamp scalar: an ISO 8601 date, written
// in UTC as DateTime.
type gitTimestamp struct{ dateTime }

// ImplementsGraphQLType reports that gitTimestamp is GitTimestamp.
func (gitTimestamp) ImplementsGraphQLType(name string) bool { return name == "GitTimestamp" }

// UnmarshalGraphQL reads a GitTimestamp argument.
func (t *gitTimestamp) UnmarshalGraphQL(input any) error {
	return t.dateTime.UnmarshalGraphQL(input)
}

// treeResolver resolves Tree: the tree sha of the repository, at dir in
// the commit it was reached from ("" for a root tree).
type treeResolver struct {
	repo     *repositoryResolver
	sha, dir string
}

// ID is forgeapi's node id of the tree (REST shows none).
func (t *treeResolver) ID() gql.ID                                              { return gql.ID(gitjson.TreeNodeID(t.repo.r.ID, t.sha)) }
func (t *treeResolver) Oid() gitObjectID                                        { return gitObjectID(t.sha) }
func (t *treeResolver) AbbreviatedOid() string                                  { return t.sha[:min(7, len(t.sha))] }
func (t *treeResolver) Repository(context.Context) (*repositoryResolver, error) { return t.repo, nil }

// Entries are the tree's entries, in git's order.
func (t *treeResolver) Entries() (*[]*treeEntryResolver, error) {
	g, err := gitread.Open(t.repo.h.Repos.GitDir(t.repo.r.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	_, entries, _, err := g.Tree(t.sha, false, -1)
	if err != nil {
		return nil, err
	}
	out := make([]*treeEntryResolver, len(entries))
	for i, e := range entries {
		out[i] = &treeEntryResolver{e: e, path: path.Join(t.dir, e.Path)}
	}
	return &out, nil
}

// treeEntryResolver resolves TreeEntry.
type treeEntryResolver struct {
	e    gitread.TreeEntry
	path string
}

func (e *treeEntryResolver) Name() string     { return path.Base(e.e.Path) }
func (e *treeEntryResolver) Type() string     { return e.e.Type }
func (e *treeEntryResolver) Oid() gitObjectID { return gitObjectID(e.e.SHA) }
func (e *treeEntryResolver) Path() *string    { return &e.path }

// Mode is the entry's file mode as a number (33188 for 100644), as the
// platform answers it.
func (e *treeEntryResolver) Mode() int32 {
	mode, _ := strconv.ParseInt(e.e.Mode, 8, 32)
	return int32(mode)
}

// blobResolver resolves Blob: the blob sha of the repository, read once
// when a field needs its content.
type blobResolver struct {
	repo *repositoryResolver
	sha  string

	once sync.Once
	data []byte
	err  error
}

// ID is the REST node_id of the blob (GET .../git/blobs/{file_sha}).
func (b *blobResolver) ID() gql.ID                                              { return gql.ID(gitjson.BlobNodeID(b.repo.r.ID, b.sha)) }
func (b *blobResolver) Oid() gitObjectID                                        { return gitObjectID(b.sha) }
func (b *blobResolver) AbbreviatedOid() string                                  { return b.sha[:min(7, len(b.sha))] }
func (b *blobResolver) Repository(context.Context) (*repositoryResolver, error) { return b.repo, nil }

// IsTruncated is false: Text is always the whole content.
func (b *blobResolver) IsTruncated() bool { return false }

// load reads the blob once.
func (b *blobResolver) load() ([]byte, error) {
	b.once.Do(func() {
		g, err := gitread.Open(b.repo.h.Repos.GitDir(b.repo.r.ID))
		if err != nil {
			b.err = err
			return
		}
		defer g.Close()
		b.data, b.err = g.ReadBlob(b.sha)
	})
	return b.data, b.err
}

// ByteSize is the blob's size in bytes.
func (b *blobResolver) ByteSize() (int32, error) {
	data, err := b.load()
	return int32(len(data)), err
}

// IsBinary reports whether the blob is binary: a NUL byte in its first
// 8000 bytes (as git decides) or text that is not UTF-8.
func (b *blobResolver) IsBinary() (*bool, error) {
	data, err := b.load()
	binary := bytes.IndexByte(data[:min(len(data), 8000)], 0) >= 0 || !utf8.Valid(data)
	return &binary, err
}

// Text is the blob's content, null when it is binary.
func (b *blobResolver) Text() (*string, error) {
	binary, err := b.IsBinary()
	if err != nil || *binary {
		return nil, err
	}
	text := string(b.data)
	return &text, nil
}

// gitNode resolves the node id of a commit, reference, tree, blob or tag
// (gitjson.ParseObjectNodeID) of a repository the caller sees;
// store.ErrNotFound otherwise, FORBIDDEN when the credentials may not
// read its contents. ok is false for an id of another kind.
func (h *Handler) gitNode(ctx context.Context, id string) (n *nodeResolver, ok bool, err error) {
	prefix, repoID, key, ok := gitjson.ParseObjectNodeID(id)
	if !ok {
		return nil, false, nil
	}
	repo, err := repos.ByID(ctx, h.DB, repoID)
	var r *repositoryResolver
	if err == nil {
		r, err = h.visibleRepository(ctx, repo)
	}
	if err == nil {
		err = r.checkContents(ctx)
	}
	if err != nil {
		return nil, true, err
	}
	var found node
	if prefix == "REF_" {
		ref, err := r.refNamed(key)
		if err != nil {
			return nil, true, err
		}
		if ref != nil {
			found = ref
		}
	} else {
		obj, err := r.object(key, "")
		if err != nil {
			return nil, true, err
		}
		if obj != nil && string(obj.ID()) == id {
			found = obj.gitObject
		}
	}
	if found == nil {
		return nil, true, store.ErrNotFound
	}
	return &nodeResolver{found}, true, nil
}

func (n *nodeResolver) ToRef() (*refResolver, bool) {
	r, ok := n.node.(*refResolver)
	return r, ok
}

func (n *nodeResolver) ToCommit() (*commitResolver, bool) {
	c, ok := n.node.(*commitResolver)
	return c, ok
}

func (n *nodeResolver) ToTree() (*treeResolver, bool) {
	t, ok := n.node.(*treeResolver)
	return t, ok
}

func (n *nodeResolver) ToBlob() (*blobResolver, bool) {
	b, ok := n.node.(*blobResolver)
	return b, ok
}

func (n *nodeResolver) ToTag() (*tagResolver, bool) {
	t, ok := n.node.(*tagResolver)
	return t, ok
}
