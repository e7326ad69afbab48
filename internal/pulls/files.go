package pulls

import (
	"context"
	"errors"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
)

// The most commits and files a pull request lists, as on the platform.
const (
	MaxCommits = 250
	MaxFiles   = 3000
)

// Commits returns the pull request's commits, oldest first, at most
// MaxCommits: those of its head that its base (as last compared) does
// not reach.
func (s *Service) Commits(ctx context.Context, p *PullRequest) ([]gitread.Commit, error) {
	g, err := gitread.Open(s.Repos.GitDir(p.Repo.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	list, err := g.CommitsBetween(ctx, p.BaseSHA, p.HeadSHA, MaxCommits)
	if err != nil {
		return nil, err
	}
	out := slices.Clone(list.Commits)
	slices.Reverse(out)
	return out, nil
}

// Files returns the files the pull request changes: its head against
// the merge base with its base, at most MaxFiles, by path.
func (s *Service) Files(ctx context.Context, p *PullRequest) ([]gitread.FileDiff, error) {
	g, err := gitread.Open(s.Repos.GitDir(p.Repo.ID))
	if err != nil {
		return nil, err
	}
	defer g.Close()
	mb, err := mergeBase(ctx, g, p)
	if err != nil {
		return nil, err
	}
	diffs, _, err := g.Diff(ctx, mb, p.HeadSHA, MaxFiles)
	return diffs, err
}

// mergeBase is the merge base of the pull request's base (as last
// compared) and head, "" when they have none.
func mergeBase(ctx context.Context, g *gitread.Repository, p *PullRequest) (string, error) {
	mb, err := g.MergeBase(ctx, p.BaseSHA, p.HeadSHA)
	if errors.Is(err, gitread.ErrNoMergeBase) {
		return "", nil
	}
	return mb, err
}

// serveDiff answers the diff or patch media type of a pull request: the
// diff from the merge base to its head, the patches of its commits.
func (h *Handler) serveDiff(w http.ResponseWriter, r *http.Request, p *PullRequest, f gitdiff.Format) error {
	dir := h.Service.Repos.GitDir(p.Repo.ID)
	g, err := gitread.Open(dir)
	if err != nil {
		return err
	}
	mb, err := mergeBase(r.Context(), g, p)
	g.Close()
	if err != nil {
		return err
	}
	return gitdiff.Serve(w, r, gitcmd.In(dir), gitdiff.Between("PullRequest", p.BaseSHA, mb, p.HeadSHA), f)
}

// fileJSON is the platform's diff-entry.
type fileJSON struct {
	SHA         *string `json:"sha"`
	Filename    string  `json:"filename"`
	Status      string  `json:"status"`
	Additions   int     `json:"additions"`
	Deletions   int     `json:"deletions"`
	Changes     int     `json:"changes"`
	BlobURL     string  `json:"blob_url"`
	RawURL      string  `json:"raw_url"`
	ContentsURL string  `json:"contents_url"`
	Patch       *string `json:"patch,omitempty"`
}

// escapePath escapes each segment of a repository path for a URL.
func escapePath(p string) string {
	parts := strings.Split(p, "/")
	for i, s := range parts {
		parts[i] = url.PathEscape(s)
	}
	return strings.Join(parts, "/")
}

// toFileJSON renders a file diff of the head commit ref of repo.
func toFileJSON(base string, repo *repos.Repository, ref string, d gitread.FileDiff) fileJSON {
	web := accounts.WebBase(base)
	status, sha := string(d.Status), d.NewSHA
	if d.Status == gitread.StatusDeleted {
		status, sha = "removed", d.OldSHA
	}
	p := escapePath(d.Path)
	f := fileJSON{SHA: &sha, Filename: d.Path, Status: status, Additions: d.Additions, Deletions: d.Deletions,
		Changes: d.Additions + d.Deletions, BlobURL: web + "/" + repo.FullName() + "/blob/" + ref + "/" + p,
		RawURL:      web + "/raw/" + repo.FullName() + "/" + ref + "/" + p,
		ContentsURL: base + "/repos/" + repo.FullName() + "/contents/" + p + "?ref=" + ref}
	if !d.Binary {
		patch := d.Patch
		f.Patch = &patch
	}
	return f
}

// listCommits answers GET .../pulls/{pull_number}/commits, paged.
func (h *Handler) listCommits(w http.ResponseWriter, r *http.Request) error {
	p, page, err := h.pullAndPage(r)
	if err != nil {
		return err
	}
	list, err := h.Service.Commits(r.Context(), p)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := []gitjson.Commit{}
	for _, c := range httpapi.Slice(page, list) {
		j, err := gitjson.CommitOf(r.Context(), h.Service.DB, base, p.Repo, c)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, len(list))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listFiles answers GET .../pulls/{pull_number}/files, paged.
func (h *Handler) listFiles(w http.ResponseWriter, r *http.Request) error {
	p, page, err := h.pullAndPage(r)
	if err != nil {
		return err
	}
	diffs, err := h.Service.Files(r.Context(), p)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := []fileJSON{}
	for _, d := range httpapi.Slice(page, diffs) {
		out = append(out, toFileJSON(base, p.Repo, p.HeadSHA, d))
	}
	httpapi.SetLinks(w, r, page, len(diffs))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// pullAndPage reads the route's pull request and the page asked for.
func (h *Handler) pullAndPage(r *http.Request) (*PullRequest, httpapi.Page, error) {
	n, err := pullNumber(r)
	if err != nil {
		return nil, httpapi.Page{}, err
	}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return nil, page, err
	}
	p, err := h.Service.Get(r.Context(), repos.From(r.Context()), n)
	return p, page, err
}
