package repocontent

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"net/url"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitread"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// listBranches answers GET /repos/{owner}/{repo}/branches, by name, paged;
// protected=true lists none (forgeapi protects no branch).
func (h *Handler) listBranches(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	branches, err := g.Branches()
	if err != nil {
		return err
	}
	if protected, err := httpapi.QueryBool(r, "protected", false); err != nil {
		return err
	} else if protected {
		branches = nil
	}
	api := httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName()
	shown := httpapi.Slice(page, branches)
	out := make([]shortBranchJSON, 0, len(shown))
	for _, b := range shown {
		out = append(out, shortBranchJSON{Name: b.Name, Commit: shaURL{SHA: b.SHA, URL: api + "/commits/" + b.SHA}})
	}
	httpapi.SetLinks(w, r, page, len(branches))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getBranch answers GET /repos/{owner}/{repo}/branches/{branch}: the
// branch with its head commit.
func (h *Handler) getBranch(w http.ResponseWriter, r *http.Request) error {
	g, repo, release, err := h.openRepo(r)
	if err != nil {
		return err
	}
	defer release()
	name := r.PathValue("branch")
	sha, ok, err := g.RefTarget("refs/heads/" + name)
	if err != nil {
		return err
	}
	if !ok {
		return apierr.New(http.StatusNotFound, "Branch not found")
	}
	c, err := g.CommitMeta(sha)
	if err != nil {
		return gitError(err, name)
	}
	base := httpapi.BaseURL(r.Context())
	commit, err := toCommitJSON(r.Context(), h.Repos.DB, base, repo, c)
	if err != nil {
		return err
	}
	api := base + "/repos/" + repo.FullName()
	self := api + "/branches/" + url.PathEscape(name)
	httpapi.WriteJSON(w, http.StatusOK, branchJSON{
		Name: name, Commit: commit,
		Links:         branchLink{HTML: accounts.WebBase(base) + "/" + repo.FullName() + "/tree/" + url.PathEscape(name), Self: self},
		Protection:    protectionJSON{RequiredStatusChecks: requiredChecksJSON{EnforcementLevel: "off", Contexts: []string{}, Checks: []string{}}},
		ProtectionURL: self + "/protection",
	})
	return nil
}

// toCommitJSON renders a commit; its author and committer are the
// accounts whose email addresses git recorded, when there are such.
func toCommitJSON(ctx context.Context, q store.Q, base string, repo *repos.Repository, c gitread.Commit) (commitJSON, error) {
	api := base + "/repos/" + repo.FullName()
	web := accounts.WebBase(base) + "/" + repo.FullName()
	author, err := accountOf(ctx, q, base, c.AuthorEmail)
	if err != nil {
		return commitJSON{}, err
	}
	committer, err := accountOf(ctx, q, base, c.CommitterEmail)
	if err != nil {
		return commitJSON{}, err
	}
	j := commitJSON{
		SHA: c.SHA, NodeID: commitNodeID(repo.ID, c.SHA),
		Commit: commitDetailJSON{
			URL:          api + "/git/commits/" + c.SHA,
			Author:       gitUserJSON{Name: c.AuthorName, Email: c.AuthorEmail, Date: wire.T(c.AuthorDate)},
			Committer:    gitUserJSON{Name: c.CommitterName, Email: c.CommitterEmail, Date: wire.T(c.CommitterDate)},
			Message:      c.Message,
			Tree:         shaURL{SHA: c.TreeSHA, URL: api + "/git/trees/" + c.TreeSHA},
			Verification: verificationJSON{Reason: "unsigned"},
		},
		URL: api + "/commits/" + c.SHA, HTMLURL: web + "/commit/" + c.SHA, CommentsURL: api + "/commits/" + c.SHA + "/comments",
		Author: author, Committer: committer, Parents: []parentJSON{},
	}
	for _, p := range c.ParentSHAs {
		j.Parents = append(j.Parents, parentJSON{SHA: p, URL: api + "/commits/" + p, HTMLURL: web + "/commit/" + p})
	}
	return j, nil
}

// accountOf is the simple user with the email address, or nil.
func accountOf(ctx context.Context, q store.Q, base, email string) (*accounts.SimpleUser, error) {
	a, err := accounts.ByEmail(ctx, q, email)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	su := accounts.ToSimpleUser(base, a)
	return &su, nil
}

// commitNodeID is a commit's global node id: its repository and SHA.
func commitNodeID(repoID int64, sha string) string {
	return "C_" + base64.RawURLEncoding.EncodeToString([]byte(wire.Itoa(repoID)+":"+sha))
}
