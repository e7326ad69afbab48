package web

import (
	"cmp"
	"context"
	"errors"
	"html/template"
	"net/http"
	"net/url"
	"path"
	"slices"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/console"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// ownerPage is a user's or organization's page.
type ownerPage struct {
	Login, Name, Kind string
	Repos             []*repos.Repository
}

// owner serves /{owner}: the account and the repositories the visitor
// may see.
func (h *Handler) owner(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	ctx := r.Context()
	a, err := h.account(ctx, x, r.PathValue("owner"))
	if err != nil {
		return err
	}
	all, err := repos.ByOwner(ctx, h.DB, a.ID)
	if err != nil {
		return err
	}
	p := ownerPage{Login: a.Login, Name: a.Name, Kind: "User"}
	if a.IsOrg() {
		p.Kind = "Organization"
	}
	for _, repo := range all { // one role each: an organization of many repositories costs a query each
		role, err := access.ListedRepoRole(ctx, h.DB, x.Principal(), repo)
		if err != nil {
			return err
		}
		if role > auth.RoleNone {
			p.Repos = append(p.Repos, repo)
		}
	}
	return h.render(w, r, x, "owner", a.Login, p)
}

// openGit opens the repository's git data; the caller closes it.
func (h *Handler) openGit(v *repoVisit) (*gitread.Repository, error) {
	g, err := gitread.Open(h.Repos.GitDir(v.repo.ID))
	if err != nil {
		return nil, gitError(err)
	}
	return g, nil
}

// gitError maps what git cannot find to the 404 page.
func gitError(err error) error {
	switch {
	case errors.Is(err, gitread.ErrRevisionNotFound), errors.Is(err, gitread.ErrPathNotFound),
		errors.Is(err, gitread.ErrRepositoryNotFound), errors.Is(err, gitread.ErrNotAFile),
		errors.Is(err, gitread.ErrNotADirectory):
		return apierr.NotFound()
	}
	return err
}

// RepoHeader is what every repository page shows on top.
type RepoHeader struct {
	Owner, Name, FullName, Description, Visibility string
	DefaultBranch                                  string
	Path                                           string // the repository's web path, /{owner}/{repo}
	Tab                                            string // code, issues, pulls or releases
	Admin                                          bool   // the visitor administers it (its settings/hooks)
}

func header(v *repoVisit, tab string) RepoHeader {
	repo := v.repo
	return RepoHeader{Owner: repo.Owner.Login, Name: repo.Name, FullName: repo.FullName(), Description: repo.Description,
		Visibility: repo.Visibility(), DefaultBranch: repo.DefaultBranch,
		Path: "/" + url.PathEscape(repo.Owner.Login) + "/" + url.PathEscape(repo.Name), Tab: tab,
		Admin: v.x.Login() != "" && v.role >= auth.RoleAdmin}
}

// treePage is a repository's home or one of its directories.
type treePage struct {
	RepoHeader
	Ref, Dir     string
	Crumbs       []crumb
	Entries      []entry
	Empty        bool
	ReadmeName   string        // "" for none
	ReadmeHTML   template.HTML // a Markdown README rendered
	ReadmeText   string        // any other README
	Branches     int
	Tags         int
	CloneHTTP    string
	Head         *gitread.Commit
	IsRepository bool // the home page (clone URLs, counts)
}

// crumb is one step of a path's breadcrumbs.
type crumb struct{ Name, Href string }

// repoHome serves /{owner}/{repo}: the default branch's root, its README
// rendered, the counts of branches and tags and the clone URL.
func (h *Handler) repoHome(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	v, err := h.visitRepo(r.Context(), x, r.PathValue("owner"), r.PathValue("repo"))
	if isNotFound(err) {
		if moved, rerr := h.redirectRenamed(w, r, x); moved || rerr != nil {
			return rerr
		}
	}
	if err != nil {
		return err
	}
	p := treePage{RepoHeader: header(v, "code"), Ref: v.repo.DefaultBranch, IsRepository: true,
		CloneHTTP: httpapi.WebBase(baseURL(r)) + "/" + v.repo.FullName() + ".git"}
	g, err := h.openGit(v)
	if err != nil {
		return err
	}
	defer g.Close()
	branches, err := g.Branches()
	if err != nil {
		return err
	}
	tags, err := g.Tags()
	if err != nil {
		return err
	}
	p.Branches, p.Tags = len(branches), len(tags)
	if len(branches) == 0 {
		p.Empty = true
		return h.render(w, r, x, "tree", v.repo.FullName(), p)
	}
	if err := h.fillTree(r.Context(), v, g, &p, ""); err != nil {
		return err
	}
	return h.render(w, r, x, "tree", v.repo.FullName(), p)
}

// tree serves /{owner}/{repo}/tree/{ref}/{path}.
func (h *Handler) tree(w http.ResponseWriter, r *http.Request, v *repoVisit, rest string) error {
	g, err := h.openGit(v)
	if err != nil {
		return err
	}
	defer g.Close()
	ref, dir, err := splitRef(g, rest)
	if err != nil {
		return err
	}
	p := treePage{RepoHeader: header(v, "code"), Ref: ref}
	if err := h.fillTree(r.Context(), v, g, &p, dir); err != nil {
		return err
	}
	title := v.repo.FullName() + " at " + ref
	if dir != "" {
		title = dir + " at " + ref + " · " + v.repo.FullName()
	}
	return h.render(w, r, v.x, "tree", title, p)
}

// fillTree lists the directory at p.Ref, its newest commit and its
// README (Markdown rendered as a file, its single line breaks joining
// lines, with the repository as the context of its @mentions and #123,
// which are linked).
func (h *Handler) fillTree(ctx context.Context, v *repoVisit, g *gitread.Repository, p *treePage, dir string) error {
	entries, err := g.ListDir(p.Ref, dir)
	if err != nil {
		return gitError(err)
	}
	slices.SortStableFunc(entries, func(a, b gitread.Entry) int { // directories first, as the platform lists them
		return cmp.Compare(entryRank(a), entryRank(b))
	})
	p.Dir, p.Entries, p.Crumbs = dir, toEntries(p.Path, p.Ref, entries), crumbs(p.Path, p.Ref, dir)
	head, err := g.CommitMeta(p.Ref)
	if err != nil {
		return gitError(err)
	}
	p.Head = &head
	readme, ok := findReadme(entries)
	if !ok {
		return nil
	}
	data, err := g.ReadBlob(readme.SHA)
	if err != nil {
		return gitError(err)
	}
	p.ReadmeName = readme.Name
	ext := strings.ToLower(path.Ext(readme.Name))
	if ext != ".md" && ext != ".markdown" {
		p.ReadmeText = string(data)
		return nil
	}
	out, err := h.renderLinked(ctx, v.repo, string(data), false)
	if err != nil {
		return err
	}
	p.ReadmeHTML, _ = out.(template.HTML)
	return nil
}

// entry is one row of a directory's listing, its link made once (a
// directory of 1,000 files renders in a fraction of the time that
// building each link in the template took).
type entry struct {
	Name, Href, Size string
	Dir              bool
}

func toEntries(repoPath, ref string, list []gitread.Entry) []entry {
	out := make([]entry, len(list))
	tree, blob := repoPath+"/tree/"+escapePath(ref)+"/", repoPath+"/blob/"+escapePath(ref)+"/"
	for i, e := range list {
		switch e.Type {
		case gitread.EntryDir:
			out[i] = entry{Name: e.Name + "/", Href: tree + escapePath(e.Path), Dir: true}
		case gitread.EntrySubmodule:
			out[i] = entry{Name: e.Name + " @ " + shortSHA(e.SHA)}
		default:
			out[i] = entry{Name: e.Name, Href: blob + escapePath(e.Path), Size: humanBytes(e.Size)}
		}
	}
	return out
}

func entryRank(e gitread.Entry) int {
	if e.Type == gitread.EntryDir {
		return 0
	}
	return 1
}

// readmeNames order the README names by preference, as the API's.
var readmeNames = []string{"readme.md", "readme.markdown", "readme.rst", "readme.txt", "readme", "readme.adoc", "readme.org"}

func findReadme(entries []gitread.Entry) (gitread.Entry, bool) {
	best, rank := gitread.Entry{}, len(readmeNames)+1
	for _, e := range entries {
		name := strings.ToLower(e.Name)
		if e.Type != gitread.EntryFile || name != "readme" && !strings.HasPrefix(name, "readme.") {
			continue
		}
		i := slices.Index(readmeNames, name)
		if i < 0 {
			i = len(readmeNames)
		}
		if i < rank {
			best, rank = e, i
		}
	}
	return best, rank <= len(readmeNames)
}

// crumbs are the links of each directory of p under the ref.
func crumbs(repoPath, ref, p string) []crumb {
	out := []crumb{{Name: path.Base(repoPath), Href: repoPath + "/tree/" + escapePath(ref)}}
	if p == "" {
		return out
	}
	parts := strings.Split(p, "/")
	for i, name := range parts {
		out = append(out, crumb{Name: name, Href: repoPath + "/tree/" + escapePath(ref) + "/" + escapePath(strings.Join(parts[:i+1], "/"))})
	}
	return out
}

// splitRef splits the rest of a tree, blob or raw address into the ref
// and the path: the longest leading segments that name a revision (a
// branch or tag may hold slashes).
func splitRef(g *gitread.Repository, rest string) (ref, p string, err error) {
	rest = strings.Trim(rest, "/")
	parts := strings.Split(rest, "/")
	for k := len(parts); k > 0; k-- {
		ref := strings.Join(parts[:k], "/")
		if _, err := g.Resolve(ref); err == nil {
			return ref, strings.Join(parts[k:], "/"), nil
		}
	}
	return "", "", apierr.NotFound()
}

// blobPage is one file.
type blobPage struct {
	RepoHeader
	Ref, File string
	Crumbs    []crumb
	Size      int64
	Lines     int
	Code      any // template.HTML, nil when not shown
	Binary    bool
	TooLarge  bool
	RawHref   string
}

// blob serves /{owner}/{repo}/blob/{ref}/{path}: the file highlighted,
// each line's number a link (#L12), and its raw link.
func (h *Handler) blob(w http.ResponseWriter, r *http.Request, v *repoVisit, rest string) error {
	g, err := h.openGit(v)
	if err != nil {
		return err
	}
	defer g.Close()
	ref, file, err := splitRef(g, rest)
	if err != nil {
		return err
	}
	if file == "" {
		return apierr.NotFound()
	}
	e, _, err := g.Stat(ref, file)
	if err != nil {
		return gitError(err)
	}
	if e.Type == gitread.EntryDir { // its listing
		http.Redirect(w, r, header(v, "").Path+"/tree/"+escapePath(ref)+"/"+escapePath(file), http.StatusFound)
		return nil
	}
	hd := header(v, "code")
	p := blobPage{RepoHeader: hd, Ref: ref, File: file, Size: e.Size,
		Crumbs:  crumbs(hd.Path, ref, path.Dir(file)),
		RawHref: hd.Path + "/raw/" + escapePath(ref) + "/" + escapePath(file)}
	if path.Dir(file) == "." {
		p.Crumbs = p.Crumbs[:1]
	}
	if e.Size > maxHighlight || e.Type == gitread.EntrySubmodule {
		p.TooLarge = e.Type != gitread.EntrySubmodule
		return h.render(w, r, v.x, "blob", file+" at "+ref+" · "+v.repo.FullName(), p)
	}
	data, err := g.ReadBlob(e.SHA)
	if err != nil {
		return gitError(err)
	}
	if isBinary(data) {
		p.Binary = true
	} else {
		p.Lines = strings.Count(string(data), "\n")
		if p.Code, err = highlight(path.Base(file), data); err != nil {
			return err
		}
	}
	return h.render(w, r, v.x, "blob", file+" at "+ref+" · "+v.repo.FullName(), p)
}

// maxRaw is the largest file the raw address serves, as the API's raw
// downloads: a larger one is for git clone.
const maxRaw = 100 << 20

// raw serves /{owner}/{repo}/raw/{ref}/{path}: the file's bytes, as text
// when they are text, never as a page of this site (a sandbox policy).
func (h *Handler) raw(w http.ResponseWriter, r *http.Request, v *repoVisit, rest string) error {
	g, err := h.openGit(v)
	if err != nil {
		return err
	}
	defer g.Close()
	ref, file, err := splitRef(g, rest)
	if err != nil {
		return err
	}
	e, _, err := g.Stat(ref, file)
	if err != nil {
		return gitError(err)
	}
	if e.Type == gitread.EntryDir || e.Type == gitread.EntrySubmodule {
		return apierr.NotFound()
	}
	if e.Size > maxRaw {
		return apierr.Forbidden("This file is larger than %d bytes: clone the repository to read it.", maxRaw)
	}
	data, err := g.ReadBlob(e.SHA)
	if err != nil {
		return gitError(err)
	}
	hdr := w.Header()
	hdr.Set("Content-Security-Policy", "default-src 'none'; sandbox")
	if isBinary(data) {
		hdr.Set("Content-Type", "application/octet-stream")
	} else {
		hdr.Set("Content-Type", "text/plain; charset=utf-8")
	}
	_, _ = w.Write(data)
	return nil
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// baseURL is the server's public API base URL.
func baseURL(r *http.Request) string { return httpapi.BaseURL(r.Context()) }
