package app

import (
	"net/http"
	"net/url"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/console"
	"forgeapi/internal/httpapi"
)

// rootRoutes are the self-managed edition's entry points: the root
// document (GET / and GET /api/v3/) and the meta document.
func rootRoutes() []httpapi.Route {
	public := auth.Rule{Public: true, TokenTypes: auth.AllTokenTypes}
	return []httpapi.Route{
		{Method: "GET", Pattern: "/{$}", Handle: rootDocument, Auth: public},
		{Method: "GET", Pattern: "/meta", Handle: metaDocument, Auth: public},
	}
}

// rootDocument answers the platform's root document: the URL templates of
// the API, under the base URL (web pages under its web host). A browser
// (a request that accepts text/html) is sent to the console's home
// instead, the signed-in user's repositories and organizations (the
// sign-in page first).
func rootDocument(w http.ResponseWriter, r *http.Request) error {
	api := httpapi.BaseURL(r.Context())
	web := accounts.WebBase(api)
	if strings.Contains(r.Header.Get("Accept"), "text/html") {
		http.Redirect(w, r, web+console.SettingsPath, http.StatusFound)
		return nil
	}
	search := func(kind, params string) string { return api + "/search/" + kind + "?q={query}" + params }
	sortedPage := "{&page,per_page,sort,order}"
	httpapi.WriteJSON(w, http.StatusOK, map[string]string{
		"current_user_url":                     api + "/user",
		"current_user_authorizations_html_url": web + "/settings/connections/applications{/client_id}",
		"authorizations_url":                   api + "/authorizations",
		"code_search_url":                      search("code", sortedPage),
		"commit_search_url":                    search("commits", sortedPage),
		"emails_url":                           api + "/user/emails",
		"emojis_url":                           api + "/emojis",
		"events_url":                           api + "/events",
		"feeds_url":                            api + "/feeds",
		"followers_url":                        api + "/user/followers",
		"following_url":                        api + "/user/following{/target}",
		"gists_url":                            api + "/gists{/gist_id}",
		"hub_url":                              api + "/hub",
		"issue_search_url":                     search("issues", sortedPage),
		"issues_url":                           api + "/issues",
		"keys_url":                             api + "/user/keys",
		"label_search_url":                     search("labels", "&repository_id={repository_id}{&page,per_page}"),
		"notifications_url":                    api + "/notifications",
		"organization_url":                     api + "/orgs/{org}",
		"organization_repositories_url":        api + "/orgs/{org}/repos{?type,page,per_page,sort}",
		"organization_teams_url":               api + "/orgs/{org}/teams",
		"public_gists_url":                     api + "/gists/public",
		"rate_limit_url":                       api + "/rate_limit",
		"repository_url":                       api + "/repos/{owner}/{repo}",
		"repository_search_url":                search("repositories", sortedPage),
		"current_user_repositories_url":        api + "/user/repos{?type,page,per_page,sort}",
		"starred_url":                          api + "/user/starred{/owner}{/repo}",
		"starred_gists_url":                    api + "/gists/starred",
		"topic_search_url":                     search("topics", "{&page,per_page}"),
		"user_url":                             api + "/users/{user}",
		"user_organizations_url":               api + "/user/orgs",
		"user_repositories_url":                api + "/users/{user}/repos{?type,page,per_page,sort}",
		"user_search_url":                      search("users", sortedPage),
	})
	return nil
}

// metaJSON is the self-managed edition's meta document.
type metaJSON struct {
	VerifiablePasswordAuthentication bool     `json:"verifiable_password_authentication"`
	InstalledVersion                 string   `json:"installed_version"`
	Packages                         []string `json:"packages"`
	Domains                          struct {
		Website []string `json:"website"`
	} `json:"domains"`
}

// metaDocument answers GET /meta: passwords are verifiable (Basic
// authentication works, with the login attempt limits), and the
// installed version is forgeapi's build.
func metaDocument(w http.ResponseWriter, r *http.Request) error {
	m := metaJSON{VerifiablePasswordAuthentication: true, InstalledVersion: ReadBuildInfo().Version, Packages: []string{}}
	if u, err := url.Parse(accounts.WebBase(httpapi.BaseURL(r.Context()))); err == nil {
		m.Domains.Website = []string{u.Host}
	}
	httpapi.WriteJSON(w, http.StatusOK, m)
	return nil
}
