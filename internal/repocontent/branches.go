package repocontent

import (
	"net/http"
	"net/url"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos/gitjson"
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
		out = append(out, shortBranchJSON{Name: b.Name, Commit: gitjson.SHAURL{SHA: b.SHA, URL: api + "/commits/" + b.SHA}})
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
	if !gitref.ValidBranch(name) {
		return apierr.New(http.StatusNotFound, "Branch not found")
	}
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
	commit, err := gitjson.CommitOf(r.Context(), h.Repos.DB, base, repo, c)
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
