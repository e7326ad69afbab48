package releases

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"os"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/blob"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// upload answers POST .../releases/{release_id}/assets?name=N&label=L
// (at the upload URL): the request's body, of any media type, is the
// asset, streamed into the blob store; 201 with the asset. A body over
// Service.MaxAsset is a 413.
func (h *Handler) upload(w http.ResponseWriter, r *http.Request) error {
	rel, err := h.release(r, true)
	if err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	up := Upload{Name: q.Get("name"), ContentType: r.Header.Get("Content-Type"), Body: r.Body}
	if q.Has("label") {
		label := q.Get("label")
		up.Label = &label
	}
	if up.Body == nil {
		up.Body = http.NoBody
	}
	repo := repos.From(r.Context())
	a, err := h.Service.Upload(r.Context(), repo, rel, actor, up)
	if err != nil {
		return uploadError(err, h.Service.MaxAsset())
	}
	httpapi.WriteJSON(w, http.StatusCreated, toAssetJSON(httpapi.BaseURL(r.Context()), repo, rel, a))
	return nil
}

// uploadError maps a failed read of an upload's body to the client's
// error: 413 over the limit, 408 when it stopped arriving.
func uploadError(err error, limit int64) error {
	var tooLarge *http.MaxBytesError
	switch {
	case errors.As(err, &tooLarge):
		return apierr.TooLarge("The asset is larger than the limit of %d bytes.", limit).WithHeader("Connection", "close")
	case errors.Is(err, os.ErrDeadlineExceeded):
		return apierr.New(http.StatusRequestTimeout, "Timed out reading the request body.").WithHeader("Connection", "close")
	}
	return err
}

// listAssets answers GET .../releases/{release_id}/assets: oldest first,
// paged. Any other last segment is a 404.
func (h *Handler) listAssets(w http.ResponseWriter, r *http.Request) error {
	if r.PathValue("assets") == "reactions" && h.Reactions != nil {
		return h.Reactions(w, r)
	}
	if r.PathValue("assets") != "assets" {
		return apierr.NotFound()
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	rel, err := h.release(r, canPush(r))
	if err != nil {
		return err
	}
	list, more, err := h.Service.Assets(r.Context(), rel, page)
	if err != nil {
		return err
	}
	base, repo := httpapi.BaseURL(r.Context()), repos.From(r.Context())
	out := make([]assetJSON, 0, len(list))
	for _, a := range list {
		out = append(out, toAssetJSON(base, repo, rel, a))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getAsset answers GET .../releases/assets/{asset_id}: the asset's JSON,
// or, with Accept: application/octet-stream, a 302 to a short-lived URL
// that serves its bytes (Service.DownloadURL), counted as a download.
func (h *Handler) getAsset(w http.ResponseWriter, r *http.Request) error {
	a, rel, err := h.asset(r, canPush(r))
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	if !wantsBytes(r) {
		httpapi.WriteJSON(w, http.StatusOK, toAssetJSON(base, repos.From(r.Context()), rel, a))
		return nil
	}
	if a.State != "uploaded" {
		return apierr.NotFound()
	}
	u, err := h.Service.DownloadURL(r.Context(), base, a)
	if err != nil {
		return err
	}
	if err := h.Service.CountDownload(r.Context(), a); err != nil {
		return err
	}
	w.Header().Set("Location", u)
	w.WriteHeader(http.StatusFound)
	return nil
}

// wantsBytes reports whether the request's Accept header asks for the
// asset's bytes (application/octet-stream).
func wantsBytes(r *http.Request) bool {
	for _, part := range strings.Split(r.Header.Get("Accept"), ",") {
		if mt, _, err := mime.ParseMediaType(strings.TrimSpace(part)); err == nil && mt == "application/octet-stream" {
			return true
		}
	}
	return false
}

// updateAsset answers PATCH .../releases/assets/{asset_id}: its name,
// label and state.
func (h *Handler) updateAsset(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Name  *string `json:"name"`
		Label *string `json:"label"`
		State *string `json:"state"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	a, rel, err := h.asset(r, true)
	if err != nil {
		return err
	}
	if a, err = h.Service.UpdateAsset(r.Context(), a, body.Name, body.Label, body.State); err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toAssetJSON(httpapi.BaseURL(r.Context()), repos.From(r.Context()), rel, a))
	return nil
}

// deleteAsset answers DELETE .../releases/assets/{asset_id}: 204.
func (h *Handler) deleteAsset(w http.ResponseWriter, r *http.Request) error {
	a, _, err := h.asset(r, true)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteAsset(r.Context(), a); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

func (h *Handler) asset(r *http.Request, withDrafts bool) (*Asset, *Release, error) {
	id, err := pathID(r, "asset_id")
	if err != nil {
		return nil, nil, err
	}
	return h.Service.Asset(r.Context(), repos.From(r.Context()), id, withDrafts)
}

// signedDownload serves a signed URL of Service.DownloadURL: the asset's
// bytes; a 403 for a bad or expired signature, a 404 for an asset gone.
func (h *Handler) signedDownload(w http.ResponseWriter, r *http.Request) {
	id, err := strconv.ParseInt(r.PathValue("asset_id"), 10, 64)
	if err != nil {
		httpapi.WriteError(w, r, apierr.NotFound())
		return
	}
	if !h.Service.CheckSignature(id, r.URL.Query()) {
		httpapi.WriteError(w, r, apierr.Forbidden("The URL signature is invalid or has expired."))
		return
	}
	a, err := h.Service.AssetByID(r.Context(), id)
	if err == nil {
		err = h.serve(w, r, a)
	}
	if err != nil {
		httpapi.WriteError(w, r, err)
	}
}

// serve writes the asset's bytes as application/octet-stream, an
// attachment named as the asset (Range requests served when the store's
// reader seeks).
func (h *Handler) serve(w http.ResponseWriter, r *http.Request, a *Asset) error {
	f, err := h.Service.Open(r.Context(), a)
	if errors.Is(err, blob.ErrNotFound) {
		return store.ErrNotFound
	} else if err != nil {
		return err
	}
	defer f.Close()
	hd := w.Header()
	hd.Set("Content-Type", "application/octet-stream")
	hd.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": a.Name}))
	hd.Set("X-Content-Type-Options", "nosniff")
	if rs, ok := f.(io.ReadSeeker); ok {
		http.ServeContent(w, r, "", a.UpdatedAt, rs)
		return nil
	}
	hd.Set("Content-Length", strconv.FormatInt(a.Size, 10))
	w.WriteHeader(http.StatusOK)
	_, _ = io.Copy(w, f)
	return nil
}
