package repocontent

import (
	"context"
	"errors"
	"io"
	"net/http"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/gitdiff"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
	"forgeapi/internal/store"
)

// Limits of the commit endpoints, as the platform's.
const (
	MaxCommitFiles   = 300 // files of one commit or comparison
	MaxCompareCommit = 250 // commits of one comparison
)

// openHistory is openRepo for the commit endpoints: an empty repository
// is the platform's 409 "Git Repository is empty.".
func (h *Handler) openHistory(r *http.Request) (*gitread.Repository, *repos.Repository, func(), error) {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return nil, nil, nil, err
	}
	if repo.PushedAt == nil {
		release()
		return nil, nil, nil, apierr.New(http.StatusConflict, "Git Repository is empty.")
	}
	return g, repo, release, nil
}

// listCommits answers GET /repos/{owner}/{repo}/commits: the history of
// sha (a branch, tag or SHA; the default branch), newest first, narrowed
// by path, author (a login or an email address), since and until, paged.
func (h *Handler) listCommits(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	q, err := h.logQuery(r)
	if err != nil {
		return err
	}
	g, repo, release, err := h.openHistory(r)
	if err != nil {
		return err
	}
	defer release()
	q.Head = r.URL.Query().Get("sha")
	if q.Head == "" {
		q.Head = repo.DefaultBranch
	}
	q.Skip, q.Limit = page.Offset(), page.Limit()
	list, more, err := g.Log(r.Context(), q)
	if err != nil {
		return gitError(err, q.Head)
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]gitjson.Commit, 0, len(list))
	for _, c := range list {
		j, err := gitjson.CommitOf(r.Context(), h.Repos.DB, base, repo, c)
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// logQuery reads the filters of GET .../commits; a bad date is a 422.
func (h *Handler) logQuery(r *http.Request) (gitread.LogQuery, error) {
	v := r.URL.Query()
	q := gitread.LogQuery{Path: v.Get("path")}
	var f apierr.Fields
	for _, d := range []struct {
		name string
		to   *time.Time
	}{{"since", &q.Since}, {"until", &q.Until}} {
		if s := v.Get(d.name); s != "" {
			t, err := time.Parse(time.RFC3339, s)
			if err != nil {
				f.Add("", d.name, apierr.CodeInvalid)
			}
			*d.to = t
		}
	}
	if err := f.Err(); err != nil {
		return q, err
	}
	if author := v.Get("author"); author != "" {
		emails, err := authorEmails(r.Context(), h.Repos.DB, author)
		if err != nil {
			return q, err
		}
		q.Authors = emails
	}
	return q, nil
}

// authorEmails is what an author filter matches: the addresses of the
// account with that login, or the address itself.
func authorEmails(ctx context.Context, q store.Q, author string) ([]string, error) {
	a, err := accounts.ByLogin(ctx, q, author)
	if errors.Is(err, store.ErrNotFound) {
		return []string{author}, nil
	}
	if err != nil {
		return nil, err
	}
	list, err := accounts.Emails(ctx, q, a.ID, false)
	if err != nil {
		return nil, err
	}
	out := []string{author}
	for _, e := range list {
		out = append(out, e.Address)
	}
	return out, nil
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

// statsJSON is a commit's line counts.
type statsJSON struct {
	Additions int `json:"additions"`
	Deletions int `json:"deletions"`
	Total     int `json:"total"`
}

// fullCommitJSON is a commit with its stats and files.
type fullCommitJSON struct {
	gitjson.Commit
	Stats statsJSON  `json:"stats"`
	Files []fileJSON `json:"files"`
}

// filesJSON renders file diffs at ref (the head of the change) and adds
// up their line counts.
func filesJSON(pl place, ref string, diffs []gitread.FileDiff) ([]fileJSON, statsJSON) {
	out := make([]fileJSON, 0, len(diffs))
	var st statsJSON
	for _, d := range diffs {
		status := string(d.Status)
		sha := d.NewSHA
		if d.Status == gitread.StatusDeleted {
			status, sha = "removed", d.OldSHA
		}
		p := escapePath(d.Path)
		f := fileJSON{SHA: &sha, Filename: d.Path, Status: status, Additions: d.Additions, Deletions: d.Deletions,
			Changes: d.Additions + d.Deletions, BlobURL: pl.web + "/blob/" + ref + "/" + p, RawURL: pl.rawBase + "/" + ref + "/" + p,
			ContentsURL: pl.api + "/contents/" + p + "?ref=" + ref}
		if !d.Binary {
			patch := d.Patch
			f.Patch = &patch
		}
		st.Additions += d.Additions
		st.Deletions += d.Deletions
		out = append(out, f)
	}
	st.Total = st.Additions + st.Deletions
	return out, st
}

// getCommit answers GET /repos/{owner}/{repo}/commits/{ref}: the commit
// with its stats and the files it changed against its first parent (at
// most MaxCommitFiles), with their patches; its diff or patch for those
// media types (gitdiff), its SHA alone for the sha media type.
func (h *Handler) getCommit(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openHistory(r)
	if err != nil {
		return err
	}
	defer release()
	ref := r.PathValue("ref")
	c, err := g.CommitMeta(ref)
	if err != nil {
		if errors.Is(err, gitread.ErrRevisionNotFound) {
			return apierr.Custom("Commit", "sha", "No commit found for SHA: %s", ref)
		}
		return err
	}
	if httpapi.MediaParam(r) == "sha" {
		writeSHA(w, c.SHA)
		return nil
	}
	if f := gitdiff.Requested(r); f != "" {
		return gitdiff.Serve(w, r, gitcmd.In(g.Dir()), gitdiff.Commit(c.SHA, c.ParentSHAs), f)
	}
	parent := ""
	if len(c.ParentSHAs) > 0 {
		parent = c.ParentSHAs[0]
	}
	diffs, _, err := g.Diff(r.Context(), parent, c.SHA, MaxCommitFiles)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	commit, err := gitjson.CommitOf(r.Context(), h.Repos.DB, base, repo, c)
	if err != nil {
		return err
	}
	files, stats := filesJSON(newPlace(base, repo, c.SHA), c.SHA, diffs)
	httpapi.WriteJSON(w, http.StatusOK, fullCommitJSON{Commit: commit, Stats: stats, Files: files})
	return nil
}

// writeSHA answers the sha media type of a commit as the platform does:
// the SHA as text, and as the ETag, so that a client that sends the SHA
// it has in If-None-Match gets 304 while the reference has not moved.
func writeSHA(w http.ResponseWriter, sha string) {
	h := w.Header()
	h.Set("Content-Type", "application/vnd.github.sha; charset=utf-8")
	h.Set("ETag", `"`+sha+`"`)
	w.WriteHeader(http.StatusOK)
	_, _ = io.WriteString(w, sha)
}
