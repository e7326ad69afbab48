package licenses

import (
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// Handler serves GET /repos/{owner}/{repo}/license.
type Handler struct {
	Repos *repos.Service
}

// Routes is the license route table: read access to the repository
// (public ones anonymously; fine-grained: Contents read, as the
// platform's).
func (h *Handler) Routes() []httpapi.Route {
	contents := auth.Rule{Target: auth.TargetRepo, Role: auth.RoleRead, Public: true,
		Permissions: auth.Perm("contents:read"), TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/license", Handle: h.get, Auth: contents},
	}
}

// contentJSON is the platform's license-content object.
type contentJSON struct {
	Name        string         `json:"name"`
	Path        string         `json:"path"`
	SHA         string         `json:"sha"`
	Size        int64          `json:"size"`
	URL         string         `json:"url"`
	HTMLURL     string         `json:"html_url"`
	GitURL      string         `json:"git_url"`
	DownloadURL string         `json:"download_url"`
	Type        string         `json:"type"`
	Content     string         `json:"content"`
	Encoding    string         `json:"encoding"`
	Links       linksJSON      `json:"_links"`
	License     *repos.License `json:"license"`
}

type linksJSON struct {
	Self string `json:"self"`
	Git  string `json:"git"`
	HTML string `json:"html"`
}

// get answers GET /repos/{owner}/{repo}/license[?ref=REF]: the license
// file at the root of the ref (the default branch by default), its
// content in base64 and the license detected in it. No license file, and
// a ref that names no commit, are a 404.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	repo := repos.From(r.Context())
	ref := r.URL.Query().Get("ref")
	if ref == "" {
		ref = repo.DefaultBranch
	}
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	defer g.Close()
	d, err := Detect(g, ref)
	if err == nil && d == nil {
		err = errNoLicense
	}
	switch {
	case errors.Is(err, errNoLicense), errors.Is(err, gitread.ErrRevisionNotFound), errors.Is(err, gitread.ErrPathNotFound),
		errors.Is(err, gitread.ErrRepositoryNotFound):
		return apierr.NotFound()
	case err != nil:
		return err
	}
	data, err := g.ReadBlob(d.File.SHA)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	httpapi.WriteJSON(w, http.StatusOK, toJSON(base, repo, ref, d, data))
	return nil
}

// toJSON renders the license file d of the repository at ref.
func toJSON(base string, repo *repos.Repository, ref string, d *Detected, data []byte) contentJSON {
	api := base + "/repos/" + repo.FullName()
	web := httpapi.WebBase(base) + "/" + repo.FullName()
	p := url.PathEscape(d.File.Path)
	self := api + "/contents/" + p + "?ref=" + url.QueryEscape(ref)
	git := api + "/git/blobs/" + d.File.SHA
	html := web + "/blob/" + escapeRef(ref) + "/" + p
	return contentJSON{Name: d.File.Name, Path: d.File.Path, SHA: d.File.SHA, Size: d.File.Size, URL: self,
		HTMLURL: html, GitURL: git, DownloadURL: httpapi.WebBase(base) + "/raw/" + repo.FullName() + "/" + escapeRef(ref) + "/" + p,
		Type: "file", Content: encode(data), Encoding: "base64", Links: linksJSON{Self: self, Git: git, HTML: html},
		License: repos.LicenseOf(base, d.Key)}
}

// escapeRef escapes each segment of a ref for a URL path.
func escapeRef(ref string) string {
	parts := strings.Split(ref, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// encode is base64 with a line break every 60 characters, as the
// platform sends file contents.
func encode(data []byte) string {
	enc := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	for len(enc) > 60 {
		b.WriteString(enc[:60] + "\n")
		enc = enc[60:]
	}
	b.WriteString(enc)
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	return b.String()
}
