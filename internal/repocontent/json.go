package repocontent

import (
	"encoding/base64"
	"net/url"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
)

// links are the _links of a content object.
type links struct {
	Self string  `json:"self"`
	Git  *string `json:"git"`
	HTML *string `json:"html"`
}

// contentJSON is a content object of every type (content-file,
// -directory entry, -symlink, -submodule); fields a type lacks are left
// out.
type contentJSON struct {
	Type            string  `json:"type"`
	Encoding        string  `json:"encoding,omitempty"`
	Size            int64   `json:"size"`
	Name            string  `json:"name"`
	Path            string  `json:"path"`
	Content         *string `json:"content,omitempty"`
	Target          string  `json:"target,omitempty"`
	SubmoduleGitURL string  `json:"submodule_git_url,omitempty"`
	SHA             string  `json:"sha"`
	URL             string  `json:"url"`
	GitURL          *string `json:"git_url"`
	HTMLURL         *string `json:"html_url"`
	DownloadURL     *string `json:"download_url"`
	Links           links   `json:"_links"`
}

// place is where contents are read: the repository, its URLs and the
// ref the request named (or the default branch).
type place struct {
	repo    *repos.Repository
	api     string // BASE/repos/OWNER/NAME
	web     string // WEB/OWNER/NAME
	rawBase string // WEB/raw/OWNER/NAME
	ref     string
}

func newPlace(base string, repo *repos.Repository, ref string) place {
	web := accounts.WebBase(base)
	return place{repo: repo, api: base + "/repos/" + repo.FullName(), web: web + "/" + repo.FullName(),
		rawBase: web + "/raw/" + repo.FullName(), ref: ref}
}

// escapePath escapes each segment of a repository path for a URL.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// toContentJSON renders an entry at the place, without its content.
func (pl place) toContentJSON(e gitread.Entry) contentJSON {
	p := escapePath(e.Path)
	self := pl.api + "/contents/" + p + "?ref=" + url.QueryEscape(pl.ref)
	j := contentJSON{Type: string(e.Type), Size: e.Size, Name: e.Name, Path: e.Path, SHA: e.SHA, URL: self}
	kind, gitKind := "blob", "blobs"
	switch e.Type {
	case gitread.EntryDir:
		kind, gitKind = "tree", "trees"
	case gitread.EntrySubmodule:
		kind, gitKind = "tree", "trees"
	}
	git := pl.api + "/git/" + gitKind + "/" + e.SHA
	html := pl.web + "/" + kind + "/" + escapePath(pl.ref) + "/" + p
	j.GitURL, j.HTMLURL = &git, &html
	if e.Type == gitread.EntryFile || e.Type == gitread.EntrySymlink {
		download := pl.rawBase + "/" + escapePath(pl.ref) + "/" + p
		j.DownloadURL = &download
	}
	j.Links = links{Self: self, Git: &git, HTML: &html}
	return j
}

// withContent sets the file's content as the platform encodes it: base64
// with a line break every 60 characters, up to MaxInlineSize; larger
// files have an empty content and the encoding none (read them raw).
func (j contentJSON) withContent(data []byte) contentJSON {
	if int64(len(data)) > MaxInlineSize {
		empty := ""
		j.Content, j.Encoding = &empty, "none"
		return j
	}
	enc := base64.StdEncoding.EncodeToString(data)
	var b strings.Builder
	b.Grow(len(enc) + len(enc)/60 + 1)
	for len(enc) > 60 {
		b.WriteString(enc[:60])
		b.WriteByte('\n')
		enc = enc[60:]
	}
	b.WriteString(enc)
	if b.Len() > 0 {
		b.WriteByte('\n')
	}
	s := b.String()
	j.Content, j.Encoding = &s, "base64"
	return j
}

// MaxInlineSize is the largest file whose content the JSON form carries
// (the platform's 1 MB); larger files are read with the raw media type.
const MaxInlineSize = 1 << 20

// MaxRawSize is the largest file the raw media type returns (the
// platform's 100 MB).
const MaxRawSize = 100 << 20

// shortBranchJSON is the platform's short-branch.
type shortBranchJSON struct {
	Name      string         `json:"name"`
	Commit    gitjson.SHAURL `json:"commit"`
	Protected bool           `json:"protected"`
}

type branchLink struct {
	HTML string `json:"html"`
	Self string `json:"self"`
}

// branchJSON is the platform's branch-with-protection.
type branchJSON struct {
	Name          string         `json:"name"`
	Commit        gitjson.Commit `json:"commit"`
	Links         branchLink     `json:"_links"`
	Protected     bool           `json:"protected"`
	Protection    protectionJSON `json:"protection"`
	ProtectionURL string         `json:"protection_url"`
}

type protectionJSON struct {
	Enabled              bool               `json:"enabled"`
	RequiredStatusChecks requiredChecksJSON `json:"required_status_checks"`
}

type requiredChecksJSON struct {
	EnforcementLevel string      `json:"enforcement_level"`
	Contexts         []string    `json:"contexts"`
	Checks           []checkJSON `json:"checks"`
}

// checkJSON is a required check: its context and the app that must
// report it (null: any).
type checkJSON struct {
	Context string `json:"context"`
	AppID   *int64 `json:"app_id"`
}
