package api

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"

	"forgeapi/internal/apierr"
	"forgeapi/internal/depreview"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// compare serves GET /repos/{owner}/{repo}/dependency-graph/compare/{basehead}.
//
// Errors: 403 for a fork or a private repository without Advanced
// Security; 400 for a basehead not written BASE...HEAD; 404 for a revision
// that names no commit, or revisions without a common ancestor; 422 for a
// bad per_page or page. The whole comparison is computed for every page;
// vulnerabilities are matched for the items of the page only.
func (h *Handler) compare(w http.ResponseWriter, r *http.Request) error {
	ctx := r.Context()
	repo := repos.From(ctx)
	if err := checkSupported(repo); err != nil {
		return err
	}
	base, head, err := parseBasehead(r.PathValue("basehead"))
	if err != nil {
		return err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	changes, err := h.Changes(ctx, h.repos.GitDir(repo.ID), base, head, manifestName(r))
	if err != nil {
		return err
	}
	snap, err := h.advisories.Current(ctx)
	if err != nil {
		return err
	}
	items := httpapi.Slice(page, changes)
	depreview.AttachVulnerabilities(items, snap.Index)
	httpapi.SetLinks(w, r, page, len(changes))
	httpapi.WriteJSON(w, http.StatusOK, toJSON(items))
	return nil
}

// checkSupported refuses repositories dependency review does not serve, as
// the platform does: forks (its message is the bare "Forbidden") and
// private repositories without Advanced Security.
func checkSupported(repo *repos.Repository) error {
	if repo.ForkOfID != 0 {
		return apierr.Forbidden("Forbidden")
	}
	if repo.Private && !repo.AdvancedSecurity {
		return apierr.Forbidden("Advanced Security must be enabled for this repository to use dependency review.")
	}
	return nil
}

// parseBasehead splits BASE...HEAD at the first "...". Branch names may
// contain "/" (and single dots); both sides must be non-empty.
func parseBasehead(basehead string) (base, head string, err error) {
	base, head, ok := gitread.SplitBasehead(basehead)
	if !ok {
		return "", "", apierr.BadRequest("Invalid basehead %q: write the base and head revisions as BASE...HEAD.", basehead)
	}
	return base, head, nil
}

// manifestName returns the name query (a manifest path relative to the
// repository root, leading "/" ignored), or "" when absent.
func manifestName(r *http.Request) string {
	return strings.TrimLeft(r.URL.Query().Get("name"), "/")
}

// Changes returns the dependency changes between the merge base of the
// revisions base and head and head itself, in the repository whose git
// directory is gitDir, without vulnerabilities. A non-empty name limits
// them to the manifest at that path. Renamed manifests are reported as
// removed from the old path and added at the new one.
//
// It returns a 404 *apierr.Error when a revision names no commit or the
// two share no history. A manifest that cannot be parsed at either side
// is left out (and logged): the platform's dependency graph skips
// manifests it cannot read rather than failing the comparison.
func (h *Handler) Changes(ctx context.Context, gitDir, base, head, name string) ([]depreview.Change, error) {
	repo, err := gitread.Open(gitDir)
	if err != nil {
		return nil, revisionError(err, base, head)
	}
	defer repo.Close()
	mergeBase, headSHA, err := resolveRange(ctx, repo, base, head)
	if err != nil {
		return nil, err
	}
	var pathspecs []string
	if name != "" {
		pathspecs = []string{name}
	}
	paths, err := repo.ChangedPaths(ctx, mergeBase, headSHA, pathspecs...)
	if err != nil {
		return nil, err
	}
	var manifests []depreview.ManifestChange
	for _, c := range paths {
		if (name != "" && c.Path != name) || !h.extractor.IsManifest(c.Path) {
			continue
		}
		m, ok, err := h.manifestChange(ctx, repo, c)
		if err != nil {
			return nil, err
		}
		if ok {
			manifests = append(manifests, m)
		}
	}
	return depreview.Diff(manifests), nil
}

// resolveRange resolves base and head and returns their merge base and
// the head commit.
func resolveRange(ctx context.Context, repo *gitread.Repository, base, head string) (mergeBase, headSHA string, err error) {
	baseSHA, err := repo.Resolve(base)
	if err != nil {
		return "", "", revisionError(err, base, head)
	}
	if headSHA, err = repo.Resolve(head); err != nil {
		return "", "", revisionError(err, base, head)
	}
	if mergeBase, err = repo.MergeBase(ctx, baseSHA, headSHA); err != nil {
		return "", "", revisionError(err, base, head)
	}
	return mergeBase, headSHA, nil
}

// revisionError maps gitread's typed errors to the client's 404s.
func revisionError(err error, base, head string) error {
	switch {
	case errors.Is(err, gitread.ErrNoMergeBase):
		return apierr.New(http.StatusNotFound, "No common ancestor between %s and %s.", base, head)
	case errors.Is(err, gitread.ErrRevisionNotFound), errors.Is(err, gitread.ErrRepositoryNotFound):
		// An empty repository has no git directory content to resolve in.
		return apierr.NotFound()
	}
	return err
}

// manifestChange reads both sides of a changed manifest and parses those
// not cached, the two at once (on a cold cache, parsing two large
// lockfiles is most of a comparison's time). ok is false when either side
// cannot be parsed.
func (h *Handler) manifestChange(ctx context.Context, repo *gitread.Repository, c gitread.Change) (m depreview.ManifestChange, ok bool, err error) {
	m.Path = c.Path
	base, err := h.readManifest(repo, c.Path, c.OldSHA)
	if err != nil {
		return m, false, err
	}
	head, err := h.readManifest(repo, c.Path, c.NewSHA)
	if err != nil {
		return m, false, err
	}
	var wg sync.WaitGroup
	for _, side := range []*manifestBlob{base, head} {
		if side != nil && side.deps == nil {
			wg.Go(func() { h.parse(ctx, side) })
		}
	}
	wg.Wait()
	if base != nil {
		m.Base, err = base.deps, base.err
	}
	if head != nil {
		m.Head, err = head.deps, errors.Join(err, head.err)
	}
	if err != nil {
		return m, false, h.skipMalformed(err)
	}
	return m, true, nil
}

// manifestBlob is one side of a changed manifest: its cached dependencies,
// or its content to parse.
type manifestBlob struct {
	path    string
	key     manifestKey
	content []byte
	deps    []depreview.Dependency // nil until parsed
	err     error
}

// readManifest returns the cached dependencies of the manifest blob sha at
// path, or its content. It returns nil for an empty sha or one that names
// no blob (a submodule entry): that side has no manifest.
func (h *Handler) readManifest(repo *gitread.Repository, path, sha string) (*manifestBlob, error) {
	if sha == "" {
		return nil, nil
	}
	b := &manifestBlob{path: path, key: manifestKey{format: depreview.FormatOf(path), blob: sha}}
	if deps, ok := h.manifests.get(b.key); ok {
		b.deps = deps
		return b, nil
	}
	content, err := repo.ReadBlob(sha)
	if errors.Is(err, gitread.ErrPathNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	b.content = content
	return b, nil
}

// parse extracts the dependencies of b and caches them; a manifest without
// dependencies gets an empty, non-nil list.
func (h *Handler) parse(ctx context.Context, b *manifestBlob) {
	deps, err := h.extractor.Extract(ctx, b.path, b.content)
	if err != nil {
		b.err = fmt.Errorf("dependency review: %w", err)
		return
	}
	if deps == nil {
		deps = []depreview.Dependency{}
	}
	b.deps = deps
	h.manifests.put(b.key, deps)
}

// skipMalformed logs a manifest that cannot be parsed and returns nil for
// it; other errors are returned.
func (h *Handler) skipMalformed(err error) error {
	if errors.Is(err, depreview.ErrMalformedManifest) {
		h.logger.Info("dependency review: skipping a manifest that cannot be parsed", "err", err)
		return nil
	}
	return err
}
