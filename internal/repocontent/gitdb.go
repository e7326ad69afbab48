package repocontent

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"path"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/githost"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
	"forgeapi/internal/wire"
)

// MaxTreeEntries is how many entries a tree lists before it is
// truncated, as the platform's 100,000.
const MaxTreeEntries = 100000

// refJSON is the platform's git-ref.
type refJSON struct {
	Ref    string        `json:"ref"`
	NodeID string        `json:"node_id"`
	URL    string        `json:"url"`
	Object refObjectJSON `json:"object"`
}

type refObjectJSON struct {
	Type string `json:"type"`
	SHA  string `json:"sha"`
	URL  string `json:"url"`
}

func toRefJSON(api string, repoID int64, ref gitread.RefInfo) refJSON {
	short := strings.TrimPrefix(ref.Name, "refs/")
	return refJSON{Ref: ref.Name, NodeID: gitjson.RefNodeID(repoID, ref.Name),
		URL:    api + "/git/refs/" + short,
		Object: refObjectJSON{Type: ref.Type, SHA: ref.SHA, URL: api + "/git/" + ref.Type + "s/" + ref.SHA}}
}

// getRef answers GET /repos/{owner}/{repo}/git/ref/{ref} ("heads/main",
// "tags/v1"): the one reference of that name.
func (h *Handler) getRef(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	name := "refs/" + r.PathValue("ref")
	if !gitref.ValidName(name) {
		return apierr.NotFound()
	}
	refs, err := g.Refs(name)
	if err != nil {
		return err
	}
	for _, ref := range refs {
		if ref.Name == name {
			httpapi.WriteJSON(w, http.StatusOK, toRefJSON(httpapi.BaseURL(r.Context())+"/repos/"+repo.FullName(), repo.ID, ref))
			return nil
		}
	}
	return apierr.NotFound()
}

// listMatchingRefs answers GET /repos/{owner}/{repo}/git/matching-refs/{ref}:
// the references whose name starts with refs/{ref} (an empty list when
// none do).
func (h *Handler) listMatchingRefs(w http.ResponseWriter, r *http.Request) error {
	return h.writeRefs(w, r, "refs/"+r.PathValue("ref"))
}

// listRefs answers GET /repos/{owner}/{repo}/git/refs, which the
// platform still serves (its description lists matching-refs instead):
// every reference, as matching-refs with an empty prefix.
func (h *Handler) listRefs(w http.ResponseWriter, r *http.Request) error {
	return h.writeRefs(w, r, "refs/")
}

// writeRefs answers the references whose name starts with prefix, by
// name.
func (h *Handler) writeRefs(w http.ResponseWriter, r *http.Request, prefix string) error {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	refs, err := g.Refs(prefix)
	if err != nil {
		return err
	}
	api := httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName()
	out := make([]refJSON, 0, len(refs))
	for _, ref := range refs {
		if !internalRef(ref.Name) {
			out = append(out, toRefJSON(api, repo.ID, ref))
		}
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// internalRef reports whether a reference is the server's own
// (refs/forgeapi/..., such as a pull request's staged head while it is
// checked), which the references lists leave out.
func internalRef(name string) bool { return strings.HasPrefix(name, "refs/forgeapi/") }

// getRefs answers GET /repos/{owner}/{repo}/git/refs/{ref}, the
// platform's older form of git/ref and matching-refs: the reference
// refs/{ref} when there is one ("heads/main"), else the list of those
// below it ("heads", "tags/v1"), else 404.
func (h *Handler) getRefs(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	name := "refs/" + strings.TrimSuffix(r.PathValue("ref"), "/")
	if !gitref.ValidName(name) && !gitref.ValidName(name+"/x") {
		return apierr.NotFound()
	}
	refs, err := g.Refs(name)
	if err != nil {
		return err
	}
	api := httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName()
	out := make([]refJSON, 0, len(refs))
	for _, ref := range refs {
		if ref.Name == name {
			httpapi.WriteJSON(w, http.StatusOK, toRefJSON(api, repo.ID, ref))
			return nil
		}
		if strings.HasPrefix(ref.Name, name+"/") && !internalRef(ref.Name) {
			out = append(out, toRefJSON(api, repo.ID, ref))
		}
	}
	if len(out) == 0 {
		return apierr.NotFound()
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// tagJSON is the platform's tag.
type tagJSON struct {
	Name       string         `json:"name"`
	Commit     gitjson.SHAURL `json:"commit"`
	ZipballURL string         `json:"zipball_url"`
	TarballURL string         `json:"tarball_url"`
	NodeID     string         `json:"node_id"`
}

// listTags answers GET /repos/{owner}/{repo}/tags, paged.
func (h *Handler) listTags(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	tags, err := g.Tags()
	if err != nil {
		return err
	}
	api := httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName()
	shown := httpapi.Slice(page, tags)
	out := make([]tagJSON, 0, len(shown))
	for _, t := range shown {
		name := url.PathEscape(t.Name)
		out = append(out, tagJSON{Name: t.Name, Commit: gitjson.SHAURL{SHA: t.CommitSHA, URL: api + "/commits/" + t.CommitSHA},
			ZipballURL: api + "/zipball/refs/tags/" + name, TarballURL: api + "/tarball/refs/tags/" + name,
			NodeID: "TAG_" + base64.RawURLEncoding.EncodeToString([]byte(wire.Itoa(repo.ID)+":"+t.Name))})
	}
	httpapi.SetLinks(w, r, page, len(tags))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getGitCommit answers GET /repos/{owner}/{repo}/git/commits/{sha}.
func (h *Handler) getGitCommit(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	c, err := g.CommitObject(r.PathValue("sha"))
	if err != nil {
		return gitError(err, r.PathValue("sha"))
	}
	base := httpapi.BaseURL(r.Context())
	full, err := gitjson.CommitOf(r.Context(), h.Repos.DB, base, repo, c)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, gitjson.GitCommitOf(full))
	return nil
}

// getTree answers GET /repos/{owner}/{repo}/git/trees/{tree_sha}: the
// tree with the SHA, or the tree of a commit's SHA or of a branch, tag
// or full reference name ("main", "feature/x", "refs/tags/v1");
// ?recursive=1 (any value but "0" and "false") for the whole tree,
// truncated past MaxTreeEntries.
func (h *Handler) getTree(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	name := r.PathValue("sha")
	treeSHA, err := g.TreeSHA(name)
	if err != nil {
		return gitError(err, name)
	}
	recursive := r.URL.Query().Get("recursive")
	sha, entries, truncated, err := g.Tree(treeSHA, recursive != "" && recursive != "0" && recursive != "false", MaxTreeEntries)
	if err != nil {
		return gitError(err, name)
	}
	api := httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName()
	httpapi.WriteJSON(w, http.StatusOK, gitjson.TreeOf(api, sha, entries, truncated))
	return nil
}

// blobJSON is the platform's blob.
type blobJSON struct {
	SHA      string `json:"sha"`
	NodeID   string `json:"node_id"`
	Size     int    `json:"size"`
	URL      string `json:"url"`
	Content  string `json:"content"`
	Encoding string `json:"encoding"`
}

// getBlob answers GET /repos/{owner}/{repo}/git/blobs/{sha}: the blob in
// base64 (up to MaxRawSize), or its bytes with the raw media type.
func (h *Handler) getBlob(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	sha := r.PathValue("sha")
	data, err := g.ReadBlob(sha)
	if err != nil {
		return gitError(err, sha)
	}
	if httpapi.MediaParam(r) == "raw" {
		return writeRaw(w, data)
	}
	if len(data) > MaxRawSize {
		return apierr.Forbidden("This blob is larger than %d bytes: clone the repository to read it.", MaxRawSize)
	}
	httpapi.WriteJSON(w, http.StatusOK, blobJSON{SHA: sha, NodeID: gitjson.BlobNodeID(repo.ID, sha),
		Size: len(data), URL: httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName() + "/git/blobs/" + sha,
		Content: base64.StdEncoding.EncodeToString(data), Encoding: "base64"})
	return nil
}

// refWriteRequest is the body of POST and PATCH .../git/refs.
type refWriteRequest struct {
	Ref   *string `json:"ref" text:"gitname"`
	SHA   *string `json:"sha"`
	Force bool    `json:"force"`
}

// zeroSHA is the old or new value of a reference that does not exist.
var zeroSHA = strings.Repeat("0", 40)

// pushRef moves one reference as a push by the caller and answers it
// (204 for a deletion). The answer is made of the update itself (refNow
// checked that its new value is an object of type typ), not read back:
// once the reference moved, nothing may turn the change into an error.
func (h *Handler) pushRef(w http.ResponseWriter, r *http.Request, status int, u githttp.RefUpdate, typ string) error {
	ctx := r.Context()
	repo := repos.From(ctx)
	pusher, err := accounts.ByID(ctx, h.Repos.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	if err := h.Git.ServerPush(ctx, repo, pusher, []githttp.RefUpdate{u}); err != nil {
		return err
	}
	if u.IsDelete() {
		httpapi.NoContent(w)
		return nil
	}
	ref := gitread.RefInfo{Name: u.Ref, SHA: u.NewSHA, Type: typ}
	httpapi.WriteJSON(w, status, toRefJSON(httpapi.BaseURL(ctx)+"/repos/"+repo.FullName(), repo.ID, ref))
	return nil
}

// refNow is refState in the request's repository.
func (h *Handler) refNow(r *http.Request, name string, target *string) (value, typ string, err error) {
	return refState(h.Repos.GitDir(repos.From(r.Context()).ID), name, target)
}

// refState returns the value of a full reference name of the repository
// in dir, "" when it does not exist, and, when target is not nil, checks
// that it names a commit of the repository, or for a tag any object (an
// annotated tag's, most often), and returns its type (422: an empty or
// unknown SHA, which git would read as the zero SHA or refuse).
func refState(dir, name string, target *string) (value, typ string, err error) {
	g, err := gitread.Open(dir)
	if err != nil {
		return "", "", err
	}
	defer g.Close()
	if target != nil {
		typ, err = g.ObjectType(*target)
		if err != nil && !errors.Is(err, gitread.ErrPathNotFound) {
			return "", "", err
		}
		if err != nil || typ != "commit" && !strings.HasPrefix(name, "refs/tags/") {
			return "", "", apierr.Unprocessable("Object does not exist")
		}
	}
	value, ok, err := g.RefTarget(name)
	if err != nil || !ok {
		return "", typ, err
	}
	return value, typ, nil
}

// createRef answers POST /repos/{owner}/{repo}/git/refs: a new branch or
// tag (ref "refs/heads/..." or "refs/tags/...") at a commit, pushed as a
// git push of it is (CreateEvent, create).
func (h *Handler) createRef(w http.ResponseWriter, r *http.Request) error {
	var body refWriteRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	if body.Ref == nil {
		f.Add("Reference", "ref", apierr.CodeMissingField)
	}
	if body.SHA == nil {
		f.Add("Reference", "sha", apierr.CodeMissingField)
	}
	if err := f.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	repo := repos.From(ctx)
	pusher, err := accounts.ByID(ctx, h.Repos.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	ref, err := CreateRef(ctx, h.Git, repo, pusher, *body.Ref, *body.SHA, githost.PushIntent{})
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusCreated, toRefJSON(httpapi.BaseURL(ctx)+"/repos/"+repo.FullName(), repo.ID, ref))
	return nil
}

// CreateRef creates the reference name (refs/heads/... or refs/tags/...)
// of repo at sha, as POST .../git/refs does: the same refusals (422: a
// name it may not create, an object that does not exist, a reference
// that exists or whose name conflicts with another's), then a server
// push by pusher with intent (zero for none), which runs the push checks
// (rulesets, branch protection: a 409) and records the push's events and
// webhooks (githost.Handler.ServerPushWith). It returns the new
// reference.
func CreateRef(ctx context.Context, git *githost.Handler, repo *repos.Repository, pusher *accounts.Account, name, sha string, intent githost.PushIntent) (gitread.RefInfo, error) {
	if err := checkNewRefName(name); err != nil {
		return gitread.RefInfo{}, err
	}
	dir := git.Repos.GitDir(repo.ID)
	old, typ, err := refState(dir, name, &sha)
	if err != nil {
		return gitread.RefInfo{}, err
	}
	if old != "" {
		return gitread.RefInfo{}, apierr.Unprocessable("Reference already exists")
	}
	if err := checkNoNameConflict(dir, name); err != nil {
		return gitread.RefInfo{}, err
	}
	u := githttp.RefUpdate{Ref: name, OldSHA: zeroSHA, NewSHA: sha}
	if err := git.ServerPushWith(ctx, repo, pusher, []githttp.RefUpdate{u}, intent); err != nil {
		return gitread.RefInfo{}, err
	}
	return gitread.RefInfo{Name: name, SHA: sha, Type: typ}, nil
}

// checkNewRefName refuses, in the platform's words, the name of a
// reference POST .../git/refs may not create: fewer than three components,
// a name git or the server refuses (gitref.ValidName), and anything but a
// branch or a tag.
func checkNewRefName(name string) error {
	switch {
	case !strings.HasPrefix(name, "refs/") || strings.Count(name, "/") < 2:
		return apierr.Unprocessable("Reference name must contain at least three slash-separated components.")
	case !gitref.ValidName(name):
		return apierr.Unprocessable("%s is not a valid ref name.", name)
	case !strings.HasPrefix(name, "refs/heads/") && !strings.HasPrefix(name, "refs/tags/"):
		return apierr.Custom("Reference", "ref", "ref must be a valid refs/heads/... or refs/tags/... name")
	}
	return nil
}

// checkNoNameConflict refuses a new reference of the repository in dir
// whose name is a directory of an existing reference's, or has one as its
// directory ("refs/heads/a" and "refs/heads/a/b"): git stores references
// as files and cannot hold both. The platform answers 422 "Reference update failed".
func checkNoNameConflict(dir, name string) error {
	g, err := gitread.Open(dir)
	if err != nil {
		return err
	}
	defer g.Close()
	below, err := g.Refs(name + "/")
	if err != nil {
		return err
	}
	conflict := len(below) > 0
	for dir := path.Dir(name); !conflict && strings.Count(dir, "/") >= 2; dir = path.Dir(dir) {
		if _, conflict, err = g.RefTarget(dir); err != nil {
			return err
		}
	}
	if conflict {
		return apierr.Unprocessable("Reference update failed")
	}
	return nil
}

// updateRef answers PATCH /repos/{owner}/{repo}/git/refs/{ref}: the
// reference moves to sha, a fast forward unless force (422 otherwise).
func (h *Handler) updateRef(w http.ResponseWriter, r *http.Request) error {
	var body refWriteRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.SHA == nil {
		return apierr.Invalid("Reference", "sha", apierr.CodeMissingField)
	}
	name := "refs/" + r.PathValue("ref")
	if !gitref.ValidName(name) {
		return noReference()
	}
	old, typ, err := h.refNow(r, name, body.SHA)
	if err != nil {
		return err
	}
	if old == "" {
		return noReference()
	}
	if !body.Force {
		g, err := gitread.Open(h.Repos.GitDir(repos.From(r.Context()).ID))
		if err != nil {
			return err
		}
		ff := false
		if oldType, err := g.ObjectType(old); err == nil && oldType == "commit" && typ == "commit" {
			ff, err = g.IsAncestor(r.Context(), old, *body.SHA)
			if err != nil {
				g.Close()
				return err
			}
		}
		g.Close()
		if !ff {
			return apierr.Unprocessable("Update is not a fast forward")
		}
	}
	return h.pushRef(w, r, http.StatusOK, githttp.RefUpdate{Ref: name, OldSHA: old, NewSHA: *body.SHA}, typ)
}

// noReference is the platform's answer to an update or a deletion of a
// reference that does not exist (or whose name git refuses).
func noReference() error { return apierr.Unprocessable("Reference does not exist") }

// deleteRef answers DELETE /repos/{owner}/{repo}/git/refs/{ref}: 204,
// pushed as a deletion (DeleteEvent, delete); 422 when there is none.
func (h *Handler) deleteRef(w http.ResponseWriter, r *http.Request) error {
	name := "refs/" + r.PathValue("ref")
	if !gitref.ValidName(name) {
		return noReference()
	}
	old, _, err := h.refNow(r, name, nil)
	if err != nil {
		return err
	}
	if old == "" {
		return noReference()
	}
	return h.pushRef(w, r, http.StatusNoContent, githttp.RefUpdate{Ref: name, OldSHA: old, NewSHA: zeroSHA}, "")
}
