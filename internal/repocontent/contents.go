package repocontent

import (
	"cmp"
	"errors"
	"net/http"
	"path"
	"slices"
	"strconv"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// openRepo returns the git data of the route's repository, for the
// caller alone until it calls release.
func (h *Handler) openRepo(r *http.Request) (g *gitread.Repository, repo *repos.Repository, release func(), err error) {
	repo = repos.From(r.Context())
	g, release, err = h.open.acquire(repo, h.Repos.GitDir(repo.ID))
	if err != nil {
		return nil, nil, nil, gitError(err, "")
	}
	return g, repo, release, nil
}

// openContents is openRepo for the contents endpoints: an empty
// repository is the platform's 404 "This repository is empty.".
func (h *Handler) openContents(r *http.Request) (*gitread.Repository, *repos.Repository, func(), error) {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return nil, nil, nil, err
	}
	if repo.PushedAt == nil {
		err = apierr.New(http.StatusNotFound, "This repository is empty.")
	} else if branches, berr := g.Branches(); berr != nil || len(branches) == 0 {
		err = cmp.Or(berr, error(apierr.New(http.StatusNotFound, "This repository is empty.")))
	}
	if err != nil {
		release()
		return nil, nil, nil, err
	}
	return g, repo, release, nil
}

// refOf is the request's ?ref=, or the repository's default branch.
func refOf(r *http.Request, repo *repos.Repository) string {
	if ref := r.URL.Query().Get("ref"); ref != "" {
		return ref
	}
	return repo.DefaultBranch
}

// gitError maps gitread's errors to the API's: a revision or path that
// is not there is a 404.
func gitError(err error, ref string) error {
	switch {
	case errors.Is(err, gitread.ErrRevisionNotFound):
		return apierr.New(http.StatusNotFound, "No commit found for the ref %s", ref)
	case errors.Is(err, gitread.ErrPathNotFound), errors.Is(err, gitread.ErrRepositoryNotFound),
		errors.Is(err, gitread.ErrNotAFile), errors.Is(err, gitread.ErrNotADirectory):
		return apierr.NotFound()
	}
	return err
}

// getContents answers GET /repos/{owner}/{repo}/contents/{path}: a file
// (its content in base64; raw bytes with the raw media type), a
// directory (its entries), a symlink (the file it points at when that is
// a file of the repository, else the link itself) or a submodule.
func (h *Handler) getContents(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openContents(r)
	if err != nil {
		return err
	}
	defer release()
	ref := refOf(r, repo)
	p := strings.Trim(r.PathValue("path"), "/")
	e, _, err := g.Stat(ref, p)
	if err != nil {
		return gitError(err, ref)
	}
	if e.Type == gitread.EntrySymlink {
		if e, err = followSymlink(g, ref, e); err != nil {
			return gitError(err, ref)
		}
	}
	pl := newPlace(httpapi.BaseURL(r.Context()), repo, ref)
	switch e.Type {
	case gitread.EntryDir:
		return h.writeDir(w, r, g, pl, e)
	case gitread.EntrySubmodule:
		j := pl.toContentJSON(e)
		j.SubmoduleGitURL, err = g.SubmoduleURL(ref, e.Path)
		if err != nil {
			return err
		}
		httpapi.WriteJSON(w, http.StatusOK, j)
		return nil
	}
	data, err := g.ReadBlob(e.SHA)
	if err != nil {
		return gitError(err, ref)
	}
	if httpapi.MediaParam(r) == "raw" {
		return writeRaw(w, data)
	}
	j := pl.toContentJSON(e)
	if e.Type == gitread.EntrySymlink {
		j.Target = string(data)
	} else {
		j = j.withContent(data)
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

// followSymlink returns the entry a symlink points at when that is a file
// of the repository (the platform then answers with the file), else the
// symlink itself.
func followSymlink(g *gitread.Repository, ref string, link gitread.Entry) (gitread.Entry, error) {
	target, err := g.ReadBlob(link.SHA)
	if err != nil {
		return link, err
	}
	t := path.Join(path.Dir(link.Path), string(target))
	if path.IsAbs(string(target)) || t == ".." || strings.HasPrefix(t, "../") {
		return link, nil
	}
	e, _, err := g.Stat(ref, t)
	if err != nil || e.Type != gitread.EntryFile {
		return link, nil
	}
	return e, nil
}

// writeDir answers the directory dir (an entry Stat gave) with its
// entries, directories and files in the order the platform lists them
// (by name), rendered once per listingKey and kept in h.listings. Its
// ETag is made, as the server's own, of the caller and a version, here
// the listing's digest (listingDigest) rather than the whole body: a
// client polling an unchanged directory gets its 304, or its 200,
// without the body being rendered or hashed again, and, like the
// server's, the ETag changes with the body and with the caller.
func (h *Handler) writeDir(w http.ResponseWriter, r *http.Request, g *gitread.Repository, pl place, dir gitread.Entry) error {
	key := listingKey{api: pl.api, web: pl.web, rawBase: pl.rawBase, ref: pl.ref, path: dir.Path, tree: dir.SHA}
	l, ok := h.listings.get(key)
	if !ok {
		entries, err := g.ListTree(dir.SHA, dir.Path)
		if err != nil {
			return gitError(err, pl.ref)
		}
		slices.SortStableFunc(entries, func(a, b gitread.Entry) int { return strings.Compare(a.Name, b.Name) })
		l = newListing(key, pl, entries)
		h.listings.add(l)
	}
	if httpapi.NotModified(w, r, httpapi.ETag(auth.PrincipalFrom(r.Context()).CacheKey(), l.digest)) {
		return nil
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(l.body)
	return nil
}

// writeRaw answers a file's bytes; files over MaxRawSize are a 403, as
// on the platform.
func writeRaw(w http.ResponseWriter, data []byte) error {
	if len(data) > MaxRawSize {
		return apierr.Forbidden("This file is larger than %d bytes: clone the repository to read it.", MaxRawSize)
	}
	w.Header().Set("Content-Type", "application/vnd.github.raw; charset=utf-8")
	w.Header().Set("Content-Length", strconv.Itoa(len(data)))
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(data)
	return nil
}

// getRaw answers GET /raw/{owner}/{repo}/{ref}/{path}, the download_url
// of files: the bytes of the file at the ref.
func (h *Handler) getRaw(w http.ResponseWriter, r *http.Request) error {
	g, _, release, err := h.openContents(r)
	if err != nil {
		return err
	}
	defer release()
	ref := r.PathValue("ref")
	data, err := g.ReadFile(ref, r.PathValue("path"))
	if err != nil {
		return gitError(err, ref)
	}
	return writeRaw(w, data)
}

// readmeNames orders the README names the platform looks for, by
// preference; any other file called README.* comes after them.
var readmeNames = []string{"readme.md", "readme.markdown", "readme.rst", "readme.txt", "readme", "readme.adoc", "readme.org"}

// getReadme answers GET /repos/{owner}/{repo}/readme[/{dir}]: the README
// of the directory (root by default), as a file's content.
func (h *Handler) getReadme(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openContents(r)
	if err != nil {
		return err
	}
	defer release()
	ref := refOf(r, repo)
	entries, err := g.ListDir(ref, strings.Trim(r.PathValue("dir"), "/"))
	if err != nil {
		return gitError(err, ref)
	}
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
	if rank > len(readmeNames) {
		return apierr.NotFound()
	}
	data, err := g.ReadBlob(best.SHA)
	if err != nil {
		return gitError(err, ref)
	}
	if httpapi.MediaParam(r) == "raw" {
		return writeRaw(w, data)
	}
	pl := newPlace(httpapi.BaseURL(r.Context()), repo, ref)
	httpapi.WriteJSON(w, http.StatusOK, pl.toContentJSON(best).withContent(data))
	return nil
}
