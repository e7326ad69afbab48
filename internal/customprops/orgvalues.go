package customprops

import (
	"net/http"
	"slices"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
)

// repoValuesJSON is the platform's org-repo-custom-property-values object.
type repoValuesJSON struct {
	RepositoryID       int64           `json:"repository_id"`
	RepositoryName     string          `json:"repository_name"`
	RepositoryFullName string          `json:"repository_full_name"`
	Properties         []PropertyValue `json:"properties"`
}

// repoQuery is a parsed repository_query: words the repository's name
// holds, and props.NAME:VALUE terms its values match (a multi_select's
// when it holds the value).
type repoQuery struct {
	words []string
	props [][2]string
}

// parseRepoQuery reads repository_query; a qualifier other than
// props.NAME is a 422.
func parseRepoQuery(s string) (repoQuery, error) {
	var q repoQuery
	for _, term := range strings.Fields(s) {
		key, value, ok := strings.Cut(term, ":")
		if !ok {
			q.words = append(q.words, strings.ToLower(term))
			continue
		}
		name, isProp := strings.CutPrefix(strings.ToLower(key), "props.")
		if !isProp || name == "" || value == "" {
			return q, apierr.Invalid("", "repository_query", apierr.CodeInvalid)
		}
		q.props = append(q.props, [2]string{name, value})
	}
	return q, nil
}

// matches reports whether the repository with the values fits the query.
func (q repoQuery) matches(repo *repos.Repository, values []PropertyValue) bool {
	for _, w := range q.words {
		if !strings.Contains(strings.ToLower(repo.Name), w) {
			return false
		}
	}
	for _, p := range q.props {
		i := slices.IndexFunc(values, func(v PropertyValue) bool { return strings.EqualFold(v.Name, p[0]) })
		if i < 0 || !slices.Contains(values[i].Value.Items, p[1]) {
			return false
		}
	}
	return true
}

// listOrgValues answers GET /orgs/{org}/properties/values
// [?repository_query=...]: the values of the organization's repositories
// that the caller can read, by name, paged.
func (h *Handler) listOrgValues(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	query, err := parseRepoQuery(r.URL.Query().Get("repository_query"))
	if err != nil {
		return err
	}
	ctx := r.Context()
	org := accounts.OrgFrom(ctx)
	all, err := repos.ByOwner(ctx, h.Service.DB, org.ID)
	if err != nil {
		return err
	}
	p := auth.PrincipalFrom(ctx)
	var out []repoValuesJSON
	for _, repo := range all {
		role, err := access.RepoRole(ctx, h.Service.DB, p, repo)
		if err != nil {
			return err
		}
		if role == auth.RoleNone {
			continue
		}
		values, err := RepoValues(ctx, h.Service.DB, repo)
		if err != nil {
			return err
		}
		if query.matches(repo, values) {
			out = append(out, repoValuesJSON{RepositoryID: repo.ID, RepositoryName: repo.Name,
				RepositoryFullName: repo.FullName(), Properties: values})
		}
	}
	httpapi.SetLinks(w, r, page, len(out))
	list := httpapi.Slice(page, out)
	if list == nil {
		list = []repoValuesJSON{}
	}
	httpapi.WriteJSON(w, http.StatusOK, list)
	return nil
}
