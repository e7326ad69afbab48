package access

import (
	"errors"
	"net/http"
	"net/url"
	"strings"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// renamedRepo answers a request whose {owner}/{repo} named no repository
// (notFound): when it is the old name of a renamed repository that the
// principal can see, a redirect to the same path with the current name
// (301 for reads, 307 for writes); otherwise notFound, so that a hidden
// repository's old name reveals nothing either.
func (g *Guard) renamedRepo(r *http.Request, p *auth.Principal, notFound error) error {
	owner, name := r.PathValue("owner"), r.PathValue("repo")
	repo, err := repos.Renamed(r.Context(), g.DB, owner, name)
	if errors.Is(err, store.ErrNotFound) {
		return notFound
	}
	if err != nil {
		return err
	}
	role, err := RepoRole(r.Context(), g.DB, p, repo)
	if err != nil {
		return err
	}
	if role == auth.RoleNone {
		return notFound
	}
	return apierr.Moved(r.Method, movedLocation(r, owner, name, repo))
}

// movedLocation is the request's URL on the public base URL, with the
// path segments owner/name replaced by the repository's full name: the
// base URL's scheme and host, its path prefix (such as /api/v3, which the
// server strips before routing) and the request's path and query.
func movedLocation(r *http.Request, owner, name string, repo *repos.Repository) string {
	segments := strings.Split(r.URL.Path, "/")
	for i := 0; i+1 < len(segments); i++ {
		if segments[i] == owner && segments[i+1] == name {
			segments[i], segments[i+1] = repo.Owner.Login, repo.Name
			break
		}
	}
	loc := url.URL{Path: strings.Join(segments, "/"), RawQuery: r.URL.RawQuery}
	if base, err := url.Parse(httpapi.BaseURL(r.Context())); err == nil {
		loc.Scheme, loc.Host = base.Scheme, base.Host
		loc.Path = strings.TrimSuffix(base.Path, "/") + loc.Path
	}
	return loc.String()
}
