package repocontent

import (
	"errors"
	"net/http"
	"net/url"
	"slices"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/protection"
	"forgeapi/internal/repos/gitjson"
)

// listBranches answers GET /repos/{owner}/{repo}/branches, by name, paged;
// protected=true lists the protected ones (internal/protection).
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
	guarded, err := protection.Protected(r.Context(), h.Repos.DB, repo.ID)
	if err != nil {
		return err
	}
	if only, err := httpapi.QueryBool(r, "protected", false); err != nil {
		return err
	} else if only {
		branches = slices.DeleteFunc(branches, func(b gitread.Ref) bool { return !guarded[b.Name] })
	}
	api := httpapi.BaseURL(r.Context()) + "/repos/" + repo.FullName()
	shown := httpapi.Slice(page, branches)
	out := make([]shortBranchJSON, 0, len(shown))
	for _, b := range shown {
		out = append(out, shortBranchJSON{Name: b.Name, Commit: gitjson.SHAURL{SHA: b.SHA, URL: api + "/commits/" + b.SHA},
			Protected: guarded[b.Name]})
	}
	httpapi.SetLinks(w, r, page, len(branches))
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getBranch answers GET /repos/{owner}/{repo}/branches/{branch}: the
// branch with its head commit.
func (h *Handler) getBranch(w http.ResponseWriter, r *http.Request) error {
	return h.writeBranch(w, r, http.StatusOK)
}

// writeBranch answers the branch {branch} with the status.
func (h *Handler) writeBranch(w http.ResponseWriter, r *http.Request, status int) error {
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
	prot, err := protection.Of(r.Context(), h.Repos.DB, repo.ID, name)
	if err != nil && !errors.Is(err, protection.ErrNotProtected) {
		return err
	}
	api := base + "/repos/" + repo.FullName()
	self := api + "/branches/" + url.PathEscape(name)
	httpapi.WriteJSON(w, status, branchJSON{
		Name: name, Commit: commit,
		Links:         branchLink{HTML: accounts.WebBase(base) + "/" + repo.FullName() + "/tree/" + url.PathEscape(name), Self: self},
		Protected:     prot != nil,
		Protection:    toProtectionJSON(prot),
		ProtectionURL: self + "/protection",
	})
	return nil
}

// toProtectionJSON is the branch's protection summary: enabled, and the
// required status checks' enforcement level (non_admins, or everyone
// with admins enforced), contexts and checks.
func toProtectionJSON(p *protection.Protection) protectionJSON {
	j := protectionJSON{RequiredStatusChecks: requiredChecksJSON{EnforcementLevel: "off", Contexts: []string{}, Checks: []checkJSON{}}}
	if p == nil {
		return j
	}
	j.Enabled = true
	if sc := p.Settings.StatusChecks; sc != nil {
		j.RequiredStatusChecks.EnforcementLevel = "non_admins"
		if p.Settings.EnforceAdmins {
			j.RequiredStatusChecks.EnforcementLevel = "everyone"
		}
		j.RequiredStatusChecks.Contexts = sc.Contexts()
		for _, c := range sc.Checks {
			j.RequiredStatusChecks.Checks = append(j.RequiredStatusChecks.Checks, checkJSON{Context: c.Context, AppID: c.AppID})
		}
	}
	return j
}
