package releases

import (
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// releaseRequest is the body of POST .../releases and PATCH
// .../releases/{release_id}.
type releaseRequest struct {
	TagName              *string `json:"tag_name"`
	TargetCommitish      *string `json:"target_commitish"`
	Name                 *string `json:"name"`
	Body                 *string `json:"body"`
	Draft                *bool   `json:"draft"`
	Prerelease           *bool   `json:"prerelease"`
	MakeLatest           *string `json:"make_latest"`
	GenerateReleaseNotes *bool   `json:"generate_release_notes"`
}

func (b releaseRequest) fields() Fields {
	f := Fields{TagName: b.TagName, TargetCommitish: b.TargetCommitish, Name: b.Name, Body: b.Body, Draft: b.Draft, Prerelease: b.Prerelease}
	if b.MakeLatest != nil {
		f.MakeLatest = *b.MakeLatest
	}
	return f
}

// create answers POST /repos/{owner}/{repo}/releases: 201 with the
// release and its Location. generate_release_notes fills the name (when
// not given) and appends the generated notes to the body.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var body releaseRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	repo := repos.From(r.Context())
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	f := body.fields()
	if body.GenerateReleaseNotes != nil && *body.GenerateReleaseNotes && f.TagName != nil {
		if err := h.withNotes(r, repo, &f); err != nil {
			return err
		}
	}
	rel, err := h.Service.Create(r.Context(), repo, actor, f)
	if err != nil {
		return err
	}
	j := toJSON(httpapi.BaseURL(r.Context()), repo, rel)
	w.Header().Set("Location", j.URL)
	httpapi.WriteJSON(w, http.StatusCreated, j)
	return nil
}

// withNotes sets f's name (when not given) and body from generated notes.
func (h *Handler) withNotes(r *http.Request, repo *repos.Repository, f *Fields) error {
	target := ""
	if f.TargetCommitish != nil {
		target = *f.TargetCommitish
	}
	notes, err := h.Service.GenerateNotes(r.Context(), httpapi.BaseURL(r.Context()), repo, NotesRequest{TagName: *f.TagName, Target: target})
	if err != nil {
		return err
	}
	if f.Name == nil || *f.Name == "" {
		f.Name = &notes.Name
	}
	body := notes.Body
	if f.Body != nil && *f.Body != "" {
		body = *f.Body + "\n\n" + notes.Body
	}
	f.Body = &body
	return nil
}

// list answers GET /repos/{owner}/{repo}/releases: newest first, paged;
// drafts for callers with push access only.
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	list, more, err := h.Service.List(r.Context(), repo, canPush(r), page)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]releaseJSON, 0, len(list))
	for _, rel := range list {
		out = append(out, toJSON(base, repo, rel))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// get answers GET .../releases/{release_id}.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	rel, err := h.release(r, canPush(r))
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, rel)
}

// latest answers GET .../releases/latest: see Service.Latest.
func (h *Handler) latest(w http.ResponseWriter, r *http.Request) error {
	rel, err := h.Service.Latest(r.Context(), repos.From(r.Context()))
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, rel)
}

// byTag answers GET .../releases/tags/{tag}: the published release of
// the tag, which may hold "/", escaped or not (go-github sends it as it
// is: the route's {rest...}).
func (h *Handler) byTag(w http.ResponseWriter, r *http.Request) error {
	tag := r.PathValue("tag")
	if rest := r.PathValue("rest"); rest != "" {
		tag += "/" + rest
	}
	rel, err := h.Service.ByTag(r.Context(), repos.From(r.Context()), tag)
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, rel)
}

// update answers PATCH .../releases/{release_id}.
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "release_id")
	if err != nil {
		return err
	}
	var body releaseRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	rel, err := h.Service.Update(r.Context(), repos.From(r.Context()), actor, id, body.fields())
	if err != nil {
		return err
	}
	return h.write(w, r, http.StatusOK, rel)
}

// delete answers DELETE .../releases/{release_id}: 204.
func (h *Handler) delete(w http.ResponseWriter, r *http.Request) error {
	id, err := pathID(r, "release_id")
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.Service.Delete(r.Context(), repos.From(r.Context()), actor, id); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// generateNotes answers POST .../releases/generate-notes: see
// Service.GenerateNotes.
func (h *Handler) generateNotes(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		TagName         *string `json:"tag_name"`
		TargetCommitish *string `json:"target_commitish"`
		PreviousTagName *string `json:"previous_tag_name"`
		ConfigPath      *string `json:"configuration_file_path"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if body.TagName == nil || *body.TagName == "" {
		return apierr.Invalid("Release", "tag_name", apierr.CodeMissingField)
	}
	req := NotesRequest{TagName: *body.TagName}
	if body.TargetCommitish != nil {
		req.Target = *body.TargetCommitish
	}
	if body.PreviousTagName != nil {
		req.Previous = *body.PreviousTagName
	}
	notes, err := h.Service.GenerateNotes(r.Context(), httpapi.BaseURL(r.Context()), repos.From(r.Context()), req)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, notes)
	return nil
}

// release reads the route's {release_id}.
func (h *Handler) release(r *http.Request, withDrafts bool) (*Release, error) {
	id, err := pathID(r, "release_id")
	if err != nil {
		return nil, err
	}
	return h.Service.Get(r.Context(), repos.From(r.Context()), id, withDrafts)
}

func (h *Handler) write(w http.ResponseWriter, r *http.Request, status int, rel *Release) error {
	httpapi.WriteJSON(w, status, toJSON(httpapi.BaseURL(r.Context()), repos.From(r.Context()), rel))
	return nil
}

func (h *Handler) actor(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// canPush reports whether the caller has push access to the route's
// repository: it sees drafts.
func canPush(r *http.Request) bool { return auth.RoleFrom(r.Context()) >= auth.RoleWrite }

// pathID is a numeric path value: a 404 when it is not a number.
func pathID(r *http.Request, name string) (int64, error) {
	id, err := httpapi.PathInt64(r, name)
	if err != nil {
		return 0, apierr.NotFound()
	}
	return id, nil
}
