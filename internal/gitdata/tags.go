package gitdata

import (
	"context"
	"net/http"

	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
	"forgeapi/internal/wire"
)

// tagRequest is the body of POST .../git/tags.
type tagRequest struct {
	Tag     *string       `json:"tag"`
	Message *string       `json:"message"`
	Object  *string       `json:"object"`
	Type    *string       `json:"type"`
	Tagger  *identityJSON `json:"tagger"`
}

// tagJSON is the platform's git-tag.
type tagJSON struct {
	NodeID       string               `json:"node_id"`
	Tag          string               `json:"tag"`
	SHA          string               `json:"sha"`
	URL          string               `json:"url"`
	Message      string               `json:"message"`
	Tagger       gitjson.GitUser      `json:"tagger"`
	Object       tagObjectJSON        `json:"object"`
	Verification gitjson.Verification `json:"verification"`
}

type tagObjectJSON struct {
	SHA  string `json:"sha"`
	Type string `json:"type"`
	URL  string `json:"url"`
}

// toTagJSON renders an annotated tag; api is the repository's API URL.
// Its verification is its signature (GPG or SSH, as `git tag -s` makes
// it) checked against the keys of the tagger's account, with the reasons
// of a commit's.
func (h *Handler) toTagJSON(ctx context.Context, api string, repoID int64, t gitread.TagObject) (tagJSON, error) {
	v, err := gitjson.Verify(ctx, h.Repos.DB, t.Signature, t.Payload, t.TaggerEmail)
	return tagJSON{NodeID: gitjson.TagNodeID(repoID, t.SHA), Tag: t.Name, SHA: t.SHA, URL: api + "/git/tags/" + t.SHA,
		Message: t.Message, Tagger: gitjson.GitUser{Name: t.TaggerName, Email: t.TaggerEmail, Date: wire.T(t.TaggerDate)},
		Object:       tagObjectJSON{SHA: t.ObjectSHA, Type: t.ObjectType, URL: api + "/git/" + t.ObjectType + "s/" + t.ObjectSHA},
		Verification: v}, err
}

// createTag answers POST /repos/{owner}/{repo}/git/tags: 201 with the new
// annotated tag object of object (which must exist with the type given:
// commit, tree or blob). The tagger is the body's or the caller. It
// creates no reference: refs/tags/{tag} is the client's to create.
func (h *Handler) createTag(w http.ResponseWriter, r *http.Request) error {
	var body tagRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	for _, req := range []struct {
		field string
		v     *string
	}{{"tag", body.Tag}, {"message", body.Message}, {"object", body.Object}, {"type", body.Type}} {
		if req.v == nil {
			f.Add("Tag", req.field, apierr.CodeMissingField)
		}
	}
	if err := f.Err(); err != nil {
		return err
	}
	switch *body.Type {
	case "commit", "tree", "blob":
	default:
		return apierr.Custom("Tag", "type", "type must be commit, tree or blob, not %s", *body.Type)
	}
	if !gitref.ValidName("refs/tags/" + *body.Tag) {
		return apierr.Custom("Tag", "tag", "%s is not a valid tag name", *body.Tag)
	}
	ctx := r.Context()
	repo := repos.From(ctx)
	dir := h.Repos.GitDir(repo.ID)
	g, err := gitread.Open(dir)
	if err != nil {
		return err
	}
	defer g.Close()
	if ok, err := objectIs(g, *body.Object, *body.Type); err != nil {
		return err
	} else if !ok {
		return apierr.Custom("Tag", "object", "Object %s is not a %s of the repository", *body.Object, *body.Type)
	}
	tagger, err := h.identity(ctx, body.Tagger, "tagger", nil)
	if err != nil {
		return err
	}
	sha, err := gitwrite.WriteTag(dir, gitwrite.NewTag{Object: *body.Object, Type: *body.Type, Name: *body.Tag,
		Tagger: tagger, Message: *body.Message})
	if err != nil {
		return refused("", err)
	}
	t, err := g.AnnotatedTag(sha)
	if err != nil {
		return err
	}
	api := apiOf(r, repo)
	j, err := h.toTagJSON(ctx, api, repo.ID, t)
	if err != nil {
		return err
	}
	httpapi.WriteCreated(w, api+"/git/tags/"+sha, j)
	return nil
}

// getTag answers GET /repos/{owner}/{repo}/git/tags/{tag_sha}: the
// annotated tag object (404 when tag_sha names none).
func (h *Handler) getTag(w http.ResponseWriter, r *http.Request) error {
	repo := repos.From(r.Context())
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	defer g.Close()
	t, err := g.AnnotatedTag(r.PathValue("tag_sha"))
	if err != nil {
		return apierr.NotFound()
	}
	j, err := h.toTagJSON(r.Context(), apiOf(r, repo), repo.ID, t)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}
