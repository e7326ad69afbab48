package releases

import (
	"net/url"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// releaseJSON is the platform's release object. It has no mentions or
// discussion: forgeapi keeps neither.
type releaseJSON struct {
	URL             string               `json:"url"`
	HTMLURL         string               `json:"html_url"`
	AssetsURL       string               `json:"assets_url"`
	UploadURL       string               `json:"upload_url"`
	TarballURL      *string              `json:"tarball_url"`
	ZipballURL      *string              `json:"zipball_url"`
	ID              int64                `json:"id"`
	NodeID          string               `json:"node_id"`
	TagName         string               `json:"tag_name"`
	TargetCommitish string               `json:"target_commitish"`
	Name            *string              `json:"name"`
	Body            *string              `json:"body"`
	Draft           bool                 `json:"draft"`
	Prerelease      bool                 `json:"prerelease"`
	Immutable       bool                 `json:"immutable"`
	CreatedAt       wire.Time            `json:"created_at"`
	PublishedAt     *wire.Time           `json:"published_at"`
	UpdatedAt       wire.Time            `json:"updated_at"`
	Author          *accounts.SimpleUser `json:"author"`
	Assets          []assetJSON          `json:"assets"`
	Reactions       reactions.Rollup     `json:"reactions"`
}

// assetJSON is the platform's release-asset object.
type assetJSON struct {
	URL                string               `json:"url"`
	BrowserDownloadURL string               `json:"browser_download_url"`
	ID                 int64                `json:"id"`
	NodeID             string               `json:"node_id"`
	Name               string               `json:"name"`
	Label              *string              `json:"label"`
	State              string               `json:"state"`
	ContentType        string               `json:"content_type"`
	Size               int64                `json:"size"`
	Digest             *string              `json:"digest"`
	DownloadCount      int64                `json:"download_count"`
	CreatedAt          wire.Time            `json:"created_at"`
	UpdatedAt          wire.Time            `json:"updated_at"`
	Uploader           *accounts.SimpleUser `json:"uploader"`
}

// apiURL is the release's API URL; base is the API's base URL.
func apiURL(base string, repo *repos.Repository, id int64) string {
	return base + "/repos/" + repo.FullName() + "/releases/" + wire.Itoa(id)
}

// UploadURL is the upload_url template of a release: the self-managed
// edition's upload path on the web root, which go-github's enterprise
// URLs and octokit use.
func UploadURL(base string, repo *repos.Repository, id int64) string {
	return httpapi.WebBase(base) + "/api/uploads/repos/" + repo.FullName() + "/releases/" + wire.Itoa(id) + "/assets{?name,label}"
}

// toJSON renders a release of repo; base is the API's base URL.
func toJSON(base string, repo *repos.Repository, r *Release) releaseJSON {
	self := apiURL(base, repo, r.ID)
	j := releaseJSON{
		URL: self, AssetsURL: self + "/assets", UploadURL: UploadURL(base, repo, r.ID),
		HTMLURL: HTMLURL(base, repo, r),
		ID:      r.ID, NodeID: wire.NodeID("RE", r.ID), TagName: r.TagName, TargetCommitish: r.TargetCommitish,
		Name: r.Name, Body: r.Body, Draft: r.Draft, Prerelease: r.Prerelease,
		CreatedAt: wire.T(r.CreatedAt), PublishedAt: wire.TP(r.PublishedAt), UpdatedAt: wire.T(r.UpdatedAt),
		Assets: make([]assetJSON, 0, len(r.Assets)), Reactions: r.Reactions.Rollup(self),
	}
	if !r.Draft {
		tar := base + "/repos/" + repo.FullName() + "/tarball/" + pathEscapeTag(r.TagName)
		zip := base + "/repos/" + repo.FullName() + "/zipball/" + pathEscapeTag(r.TagName)
		j.TarballURL, j.ZipballURL = &tar, &zip
	}
	if r.Author != nil {
		u := accounts.ToSimpleUser(base, r.Author)
		j.Author = &u
	} else {
		j.Author = ghost(base)
	}
	for _, a := range r.Assets {
		j.Assets = append(j.Assets, toAssetJSON(base, repo, r, a))
	}
	return j
}

// toAssetJSON renders an asset of release r of repo.
func toAssetJSON(base string, repo *repos.Repository, r *Release, a *Asset) assetJSON {
	j := assetJSON{
		URL:                base + "/repos/" + repo.FullName() + "/releases/assets/" + wire.Itoa(a.ID),
		BrowserDownloadURL: BrowserDownloadURL(base, repo, r, a.Name),
		ID:                 a.ID, NodeID: wire.NodeID("RA", a.ID), Name: a.Name, Label: a.Label, State: a.State,
		ContentType: a.ContentType, Size: a.Size, Digest: a.Digest, DownloadCount: a.DownloadCount,
		CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt),
	}
	if a.Uploader != nil {
		u := accounts.ToSimpleUser(base, a.Uploader)
		j.Uploader = &u
	}
	return j
}

// BrowserDownloadURL is where a browser downloads the asset named name of
// release r: {web}/{owner}/{repo}/releases/download/{tag}/{name} (a
// draft's tag is untagged-{id}, as on the platform).
func BrowserDownloadURL(base string, repo *repos.Repository, r *Release, name string) string {
	tag := r.TagName
	if r.Draft {
		tag = "untagged-" + wire.Itoa(r.ID)
	}
	return httpapi.WebBase(base) + "/" + repo.FullName() + "/releases/download/" + pathEscapeTag(tag) + "/" + url.PathEscape(name)
}

// pathEscapeTag escapes a tag name for a URL path, its slashes kept.
func pathEscapeTag(tag string) string {
	parts := strings.Split(tag, "/")
	for i, p := range parts {
		parts[i] = url.PathEscape(p)
	}
	return strings.Join(parts, "/")
}

// ghost is the platform's stand-in for a deleted account.
func ghost(base string) *accounts.SimpleUser {
	u := accounts.ToSimpleUser(base, &accounts.Account{ID: 10137, Login: "ghost", Type: "User"})
	return &u
}
