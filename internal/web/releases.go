package web

import (
	"net/http"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/releases"
)

// releasesPage lists releases, or shows one.
type releasesPage struct {
	RepoHeader
	Releases []release
	One      bool
	Page     int
	More     bool
}

// release is a release as the pages show it.
type release struct {
	Name, Tag, Href, Author string
	Draft, Prerelease       bool
	Published               string
	Body                    any
	Assets                  []asset
}

type asset struct {
	Name, Href string
	Size       int64
}

// releasePages serves /{owner}/{repo}/releases and /releases/tag/{tag}
// (a draft's address is /releases/tag/untagged-{id}, shown to those who
// may push, as the API shows drafts).
func (h *Handler) releasePages(w http.ResponseWriter, r *http.Request, v *repoVisit, rest string) error {
	ctx := r.Context()
	drafts := v.role >= auth.RoleWrite
	p := releasesPage{RepoHeader: header(v, "releases"), Page: pageOf(r)}
	var list []*releases.Release
	title := "Releases · " + v.repo.FullName()
	switch tag, ok := strings.CutPrefix(rest, "tag/"); {
	case rest == "":
		var err error
		list, p.More, err = h.Releases.List(ctx, v.repo, drafts, httpapi.Page{Page: p.Page, PerPage: 30})
		if err != nil {
			return err
		}
	case ok && tag != "":
		rel, err := h.releaseByTag(r, v, tag, drafts)
		if err != nil {
			return hidden(v.x, err)
		}
		list, p.One = []*releases.Release{rel}, true
		title = releaseName(rel) + " · " + v.repo.FullName()
	default:
		return apierr.NotFound()
	}
	for _, rel := range list {
		j, err := h.toRelease(r, v, rel)
		if err != nil {
			return err
		}
		p.Releases = append(p.Releases, j)
	}
	return h.render(w, r, v.x, "releases", title, p)
}

// releaseByTag finds the release of a tag, or the draft of an
// untagged-{id} address.
func (h *Handler) releaseByTag(r *http.Request, v *repoVisit, tag string, drafts bool) (*releases.Release, error) {
	if id, ok := strings.CutPrefix(tag, "untagged-"); ok && drafts {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			return h.Releases.Get(r.Context(), v.repo, n, true)
		}
	}
	return h.Releases.ByTagName(r.Context(), v.repo, tag, false)
}

func releaseName(rel *releases.Release) string {
	if rel.Name != nil && *rel.Name != "" {
		return *rel.Name
	}
	return rel.TagName
}

func (h *Handler) toRelease(r *http.Request, v *repoVisit, rel *releases.Release) (release, error) {
	base := baseURL(r)
	web := httpapi.WebBase(base)
	out := release{Name: releaseName(rel), Tag: rel.TagName, Href: strings.TrimPrefix(releases.HTMLURL(base, v.repo, rel), web),
		Draft: rel.Draft, Prerelease: rel.Prerelease, Author: login(rel.Author)}
	if rel.PublishedAt != nil {
		out.Published = rel.PublishedAt.UTC().Format("Jan 2, 2006")
	}
	if rel.Body != nil {
		body, err := h.renderGFM(r.Context(), v.repo, *rel.Body)
		if err != nil {
			return out, err
		}
		out.Body = body
	}
	for _, a := range rel.Assets {
		out.Assets = append(out.Assets, asset{Name: a.Name, Size: a.Size,
			Href: strings.TrimPrefix(releases.BrowserDownloadURL(base, v.repo, rel, a.Name), web)})
	}
	return out, nil
}

// login is an account's login, "ghost" once it is gone (as the
// platform's).
func login(a *accounts.Account) string {
	if a == nil {
		return "ghost"
	}
	return a.Login
}
