package prereceive

import (
	"strconv"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// downloadJSON is an environment's download state. forgeapi downloads no
// image: the default environment is the host, the others are kept and
// never used, and the state says so.
type downloadJSON struct {
	URL          string  `json:"url"`
	State        string  `json:"state"`
	DownloadedAt *string `json:"downloaded_at"`
	Message      *string `json:"message"`
}

// environmentJSON is the platform's pre-receive environment.
type environmentJSON struct {
	ID                 int64        `json:"id"`
	Name               string       `json:"name"`
	ImageURL           string       `json:"image_url"`
	URL                string       `json:"url"`
	HTMLURL            string       `json:"html_url"`
	DefaultEnvironment bool         `json:"default_environment"`
	CreatedAt          wire.Time    `json:"created_at"`
	HooksCount         int          `json:"hooks_count"`
	Download           downloadJSON `json:"download"`
}

func envURL(base string, id int64) string {
	return base + "/admin/pre-receive-environments/" + strconv.FormatInt(id, 10)
}

func toDownloadJSON(base string, e *Environment) downloadJSON {
	msg := "Environment images are not downloaded: forgeapi runs every hook's script on the server's host."
	if e.Default {
		msg = "The default environment is the server's host: there is nothing to download."
	}
	return downloadJSON{URL: envURL(base, e.ID) + "/downloads/latest", State: "not_started", Message: &msg}
}

func toEnvironmentJSON(base string, e *Environment) environmentJSON {
	return environmentJSON{ID: e.ID, Name: e.Name, ImageURL: e.ImageURL, URL: envURL(base, e.ID),
		HTMLURL:            accounts.WebBase(base) + "/admin/pre-receive-environments/" + strconv.FormatInt(e.ID, 10),
		DefaultEnvironment: e.Default, CreatedAt: wire.T(e.CreatedAt), HooksCount: e.HooksCount,
		Download: toDownloadJSON(base, e)}
}

// scriptRepoJSON is a hook's script repository.
type scriptRepoJSON struct {
	ID       int64  `json:"id"`
	FullName string `json:"full_name"`
	URL      string `json:"url"`
	HTMLURL  string `json:"html_url"`
}

// hookJSON is the platform's pre-receive hook (the site's view).
type hookJSON struct {
	ID                           int64           `json:"id"`
	Name                         string          `json:"name"`
	Enforcement                  string          `json:"enforcement"`
	Script                       string          `json:"script"`
	ScriptRepository             scriptRepoJSON  `json:"script_repository"`
	Environment                  environmentJSON `json:"environment"`
	AllowDownstreamConfiguration bool            `json:"allow_downstream_configuration"`
}

func toHookJSON(base string, h *Hook, repo *repos.Repository, env *Environment) hookJSON {
	return hookJSON{ID: h.ID, Name: h.Name, Enforcement: h.Enforcement, Script: h.Script,
		ScriptRepository: scriptRepoJSON{ID: repo.ID, FullName: repo.FullName(), URL: base + "/repos/" + repo.FullName(),
			HTMLURL: accounts.WebBase(base) + "/" + repo.FullName()},
		Environment: toEnvironmentJSON(base, env), AllowDownstreamConfiguration: h.AllowDownstream}
}

// orgHookJSON is a hook as an organization sees it.
type orgHookJSON struct {
	ID                           int64  `json:"id"`
	Name                         string `json:"name"`
	Enforcement                  string `json:"enforcement"`
	ConfigurationURL             string `json:"configuration_url"`
	AllowDownstreamConfiguration bool   `json:"allow_downstream_configuration"`
}

// repoHookJSON is a hook as a repository sees it.
type repoHookJSON struct {
	ID               int64  `json:"id"`
	Name             string `json:"name"`
	Enforcement      string `json:"enforcement"`
	ConfigurationURL string `json:"configuration_url"`
}

// configurationURL is where the setting in force was made.
func configurationURL(base string, h *Hook, st Setting, org *accounts.Account, repo *repos.Repository) string {
	id := strconv.FormatInt(h.ID, 10)
	switch st.Level {
	case LevelRepo:
		return base + "/repos/" + repo.FullName() + "/pre-receive-hooks/" + id
	case LevelOrg:
		return base + "/orgs/" + org.Login + "/pre-receive-hooks/" + id
	}
	return base + "/admin/pre-receive-hooks/" + id
}
