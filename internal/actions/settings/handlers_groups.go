package settings

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"slices"
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// groupRoutes are the runner groups of organizations.
func (h *Handler) groupRoutes() []httpapi.Route {
	const groups = "/orgs/{org}/actions/runner-groups"
	const group = groups + "/{runner_group_id}"
	read, write := orgRule("organization_self_hosted_runners:read"), orgRule("organization_self_hosted_runners:write")
	return []httpapi.Route{
		{Method: "GET", Pattern: groups, Handle: h.listGroups, Auth: read},
		{Method: "POST", Pattern: groups, Handle: h.createGroup, Auth: write},
		{Method: "GET", Pattern: group, Handle: h.getGroup, Auth: read},
		{Method: "PATCH", Pattern: group, Handle: h.updateGroup, Auth: write},
		{Method: "DELETE", Pattern: group, Handle: h.deleteGroup, Auth: write},
		{Method: "GET", Pattern: group + "/repositories", Handle: h.listGroupRepos, Auth: read},
		{Method: "PUT", Pattern: group + "/repositories", Handle: h.setGroupRepos, Auth: write},
		{Method: "PUT", Pattern: group + "/repositories/{repository_id}", Handle: h.groupRepo((*Service).AddGroupRepository), Auth: write},
		{Method: "DELETE", Pattern: group + "/repositories/{repository_id}", Handle: h.groupRepo((*Service).RemoveGroupRepository), Auth: write},
		{Method: "GET", Pattern: group + "/runners", Handle: h.listGroupRunners, Auth: read},
		{Method: "PUT", Pattern: group + "/runners", Handle: h.setGroupRunners, Auth: write},
		{Method: "PUT", Pattern: group + "/runners/{runner_id}", Handle: h.groupRunner((*Service).AddGroupRunner), Auth: write},
		{Method: "DELETE", Pattern: group + "/runners/{runner_id}", Handle: h.groupRunner((*Service).RemoveGroupRunner), Auth: write},
	}
}

// groupJSON is the platform's runner-groups-org.
type groupJSON struct {
	ID                       int64    `json:"id"`
	Name                     string   `json:"name"`
	Visibility               string   `json:"visibility"`
	Default                  bool     `json:"default"`
	SelectedRepositoriesURL  string   `json:"selected_repositories_url,omitempty"`
	RunnersURL               string   `json:"runners_url"`
	Inherited                bool     `json:"inherited"`
	AllowsPublicRepositories bool     `json:"allows_public_repositories"`
	RestrictedToWorkflows    bool     `json:"restricted_to_workflows"`
	SelectedWorkflows        []string `json:"selected_workflows"`
	WorkflowRestrictionsRO   bool     `json:"workflow_restrictions_read_only"`
}

// toGroupJSON renders a group of the organization org.
func toGroupJSON(base, org string, g *RunnerGroup) groupJSON {
	u := base + "/orgs/" + org + "/actions/runner-groups/" + strconv.FormatInt(g.ID, 10)
	j := groupJSON{ID: g.ID, Name: g.Name, Visibility: g.Visibility, Default: g.Default, RunnersURL: u + "/runners",
		AllowsPublicRepositories: g.AllowsPublicRepositories, RestrictedToWorkflows: g.RestrictedToWorkflows,
		SelectedWorkflows: g.SelectedWorkflows}
	if g.Visibility == VisibilitySelected {
		j.SelectedRepositoriesURL = u + "/repositories"
	}
	if j.SelectedWorkflows == nil {
		j.SelectedWorkflows = []string{}
	}
	return j
}

// group resolves the route's {runner_group_id}: a 404 when the
// organization has none.
func (h *Handler) group(r *http.Request) (*RunnerGroup, error) {
	id, err := httpapi.PathInt64(r, "runner_group_id")
	if err != nil {
		return nil, err
	}
	g, err := h.Service.RunnerGroup(r.Context(), accounts.OrgFrom(r.Context()).ID, id)
	return g, notFound(err)
}

// listGroups answers GET /orgs/{org}/actions/runner-groups.
func (h *Handler) listGroups(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	list, total, err := h.Service.RunnerGroups(r.Context(), org.ID, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	out := make([]groupJSON, 0, len(list))
	for _, g := range list {
		out = append(out, toGroupJSON(httpapi.BaseURL(r.Context()), org.Login, g))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "runner_groups": out})
	return nil
}

// selectedWorkflow is the form of a group's selected workflow, which
// names a ref (a branch, tag or SHA) as on the platform.
var selectedWorkflow = regexp.MustCompile(`^[^/@\s]+/[^/@\s]+/\.github/workflows/[^/@\s]+\.ya?ml@\S+$`)

// groupRequest is the body of POST and PATCH of a runner group.
type groupRequest struct {
	Name                     *string   `json:"name"`
	Visibility               *string   `json:"visibility"`
	SelectedRepositoryIDs    *repoIDs  `json:"selected_repository_ids"`
	Runners                  *repoIDs  `json:"runners"`
	AllowsPublicRepositories *bool     `json:"allows_public_repositories"`
	RestrictedToWorkflows    *bool     `json:"restricted_to_workflows"`
	SelectedWorkflows        *[]string `json:"selected_workflows"`
}

// groupChange validates a group's body into a GroupChange for the
// organization orgID; g is the group changed, nil for a new one.
func (h *Handler) groupChange(r *http.Request, orgID int64, g *RunnerGroup, b groupRequest) (GroupChange, error) {
	var f apierr.Fields
	if b.Name == nil && g == nil {
		f.Add("RunnerGroup", "name", apierr.CodeMissingField)
	} else if b.Name != nil && (*b.Name == "" || len(*b.Name) > 64) {
		f.Addf("RunnerGroup", "name", "name must be 1 to 64 characters")
	}
	if b.Visibility != nil && !slices.Contains([]string{"all", "selected", "private"}, *b.Visibility) {
		f.Addf("RunnerGroup", "visibility", "visibility must be one of all, selected or private")
	}
	if g != nil && g.Default && (b.Name != nil && *b.Name != g.Name || b.Visibility != nil && *b.Visibility != g.Visibility) {
		f.Addf("RunnerGroup", "name", "The default runner group's name and visibility cannot be changed")
	}
	if b.SelectedWorkflows != nil {
		for _, w := range *b.SelectedWorkflows {
			if !selectedWorkflow.MatchString(w) {
				f.Addf("RunnerGroup", "selected_workflows", "%q is not OWNER/REPO/.github/workflows/FILE@REF (a branch, tag or SHA)", w)
			}
		}
	}
	c := GroupChange{Name: b.Name, Visibility: b.Visibility, AllowsPublicRepositories: b.AllowsPublicRepositories,
		RestrictedToWorkflows: b.RestrictedToWorkflows, SelectedWorkflows: b.SelectedWorkflows}
	if b.SelectedRepositoryIDs != nil {
		ids := []int64(*b.SelectedRepositoryIDs)
		missing, err := h.Service.notOrgRepositories(r.Context(), orgID, ids)
		if err != nil {
			return c, err
		}
		for _, id := range missing {
			f.Addf("RunnerGroup", "selected_repository_ids", "Repository %d is not a repository of the organization", id)
		}
		c.Repositories = &ids
	}
	if b.Runners != nil {
		ids := []int64(*b.Runners)
		c.Runners = &ids
	}
	return c, f.Err()
}

// createGroup answers POST /orgs/{org}/actions/runner-groups: 201 with
// the group.
func (h *Handler) createGroup(w http.ResponseWriter, r *http.Request) error {
	var body groupRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	org := accounts.OrgFrom(r.Context())
	c, err := h.groupChange(r, org.ID, nil, body)
	if err != nil {
		return err
	}
	g, err := h.Service.CreateRunnerGroup(r.Context(), org.ID, c)
	if err != nil {
		return runnerMissing(err)
	}
	httpapi.WriteJSON(w, http.StatusCreated, toGroupJSON(httpapi.BaseURL(r.Context()), org.Login, g))
	return nil
}

// runnerMissing turns store.ErrNotFound of a runner id in a body into a
// 422.
func runnerMissing(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return apierr.Validation(apierr.FieldError{Resource: "RunnerGroup", Field: "runners", Code: apierr.CodeInvalid,
			Message: "runners must be runners of the organization"})
	}
	return err
}

// getGroup answers GET .../runner-groups/{runner_group_id}.
func (h *Handler) getGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := h.group(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toGroupJSON(httpapi.BaseURL(r.Context()), accounts.OrgFrom(r.Context()).Login, g))
	return nil
}

// updateGroup answers PATCH .../runner-groups/{runner_group_id}: 200
// with the group.
func (h *Handler) updateGroup(w http.ResponseWriter, r *http.Request) error {
	var body groupRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	g, err := h.group(r)
	if err != nil {
		return err
	}
	c, err := h.groupChange(r, g.OrgID, g, body)
	if err != nil {
		return err
	}
	g, err = h.Service.UpdateRunnerGroup(r.Context(), g, c)
	if err != nil {
		return runnerMissing(err)
	}
	httpapi.WriteJSON(w, http.StatusOK, toGroupJSON(httpapi.BaseURL(r.Context()), accounts.OrgFrom(r.Context()).Login, g))
	return nil
}

// deleteGroup answers DELETE .../runner-groups/{runner_group_id}: 204.
func (h *Handler) deleteGroup(w http.ResponseWriter, r *http.Request) error {
	g, err := h.group(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteRunnerGroup(r.Context(), g); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// listGroupRepos answers GET .../runner-groups/{runner_group_id}/repositories.
func (h *Handler) listGroupRepos(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	g, err := h.group(r)
	if err != nil {
		return err
	}
	ids, total, err := h.Service.GroupRepositories(r.Context(), g, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	return h.writeRepositoryPage(w, r, page, ids, total)
}

// setGroupRepos answers PUT .../runner-groups/{runner_group_id}/repositories.
func (h *Handler) setGroupRepos(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Selected *repoIDs `json:"selected_repository_ids"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	g, err := h.group(r)
	if err != nil {
		return err
	}
	if body.Selected == nil {
		return apierr.Invalid("RunnerGroup", "selected_repository_ids", apierr.CodeMissingField)
	}
	if err := h.checkRepos(r, g.OrgID, *body.Selected...); err != nil {
		return err
	}
	if err := h.Service.SetGroupRepositories(r.Context(), g, *body.Selected); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// groupRepo adds or removes the route's {repository_id}: 204.
func (h *Handler) groupRepo(change func(*Service, context.Context, *RunnerGroup, int64) error) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := httpapi.PathInt64(r, "repository_id")
		if err != nil {
			return err
		}
		g, err := h.group(r)
		if err != nil {
			return err
		}
		if err := h.checkRepos(r, g.OrgID, id); err != nil {
			return err
		}
		if err := change(h.Service, r.Context(), g, id); err != nil {
			return err
		}
		httpapi.NoContent(w)
		return nil
	}
}

// listGroupRunners answers GET .../runner-groups/{runner_group_id}/runners.
func (h *Handler) listGroupRunners(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	g, err := h.group(r)
	if err != nil {
		return err
	}
	list, total, err := h.Service.GroupRunners(r.Context(), g, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	out := make([]runnerJSON, 0, len(list))
	for _, rn := range list {
		out = append(out, toRunnerJSON(rn))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "runners": out})
	return nil
}

// setGroupRunners answers PUT .../runner-groups/{runner_group_id}/runners:
// runner ids that are not the organization's are a 422.
func (h *Handler) setGroupRunners(w http.ResponseWriter, r *http.Request) error {
	var body struct {
		Runners *repoIDs `json:"runners"`
	}
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	g, err := h.group(r)
	if err != nil {
		return err
	}
	if body.Runners == nil {
		return apierr.Invalid("RunnerGroup", "runners", apierr.CodeMissingField)
	}
	if err := runnerMissing(h.Service.SetGroupRunners(r.Context(), g, *body.Runners)); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// groupRunner adds or removes the route's {runner_id}: 204, a 404 for a
// runner the organization does not have.
func (h *Handler) groupRunner(change func(*Service, context.Context, *RunnerGroup, int64) error) httpapi.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) error {
		id, err := httpapi.PathInt64(r, "runner_id")
		if err != nil {
			return err
		}
		g, err := h.group(r)
		if err != nil {
			return err
		}
		if _, err := h.Service.Runner(r.Context(), OrgPlace(g.OrgID), id); err != nil {
			return notFound(err)
		}
		if err := change(h.Service, r.Context(), g, id); err != nil {
			return notFound(err)
		}
		httpapi.NoContent(w)
		return nil
	}
}
