package agents

import (
	"net/url"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
)

// sourceJSON is the Custom agents source object. Organization carries
// avatar_url in the PUT response only, and ruleset appears there when the
// source has one, as the spec and the platform show them.
type sourceJSON struct {
	Organization orgJSON      `json:"organization"`
	Repository   *repoJSON    `json:"repository"` // null when the repository no longer exists
	Ruleset      *rulesetJSON `json:"ruleset,omitempty"`
}

type orgJSON struct {
	ID        int64  `json:"id"`
	Login     string `json:"login"`
	AvatarURL string `json:"avatar_url,omitempty"`
}

type repoJSON struct {
	ID       int64  `json:"id"`
	Name     string `json:"name"`
	FullName string `json:"full_name"`
}

type rulesetJSON struct {
	ID          int64  `json:"id"`
	Name        string `json:"name"`
	Enforcement string `json:"enforcement"`
}

// toSourceJSON renders a source; full adds what only the PUT response has.
func toSourceJSON(base string, src *Source, full bool) sourceJSON {
	out := sourceJSON{Organization: orgJSON{ID: src.Org.ID, Login: src.Org.Login}}
	if full {
		out.Organization.AvatarURL = accounts.AvatarURL(base, src.Org)
		if rs := src.Ruleset; rs != nil {
			out.Ruleset = &rulesetJSON{ID: rs.ID, Name: rs.Name, Enforcement: rs.Enforcement}
		}
	}
	if r := src.Repo; r != nil {
		out.Repository = &repoJSON{ID: r.ID, Name: r.Name, FullName: r.FullName()}
	}
	return out
}

// agentsJSON is the list wrapper; CustomAgents is null when no source is
// configured and an array (maybe empty) otherwise.
type agentsJSON struct {
	CustomAgents []agentJSON `json:"custom_agents"`
}

type agentJSON struct {
	Name     string `json:"name"`
	FilePath string `json:"file_path"`
	URL      string `json:"url"`
}

// toAgentJSON renders an agent with the web address of its file:
// {web}/{owner}/{repo}/blob/{branch}/agents/{file}.
func toAgentJSON(base string, repo *repos.Repository, a Agent) agentJSON {
	u := accounts.WebBase(base) + "/" + escapePath(repo.FullName()) + "/blob/" +
		escapePath(repo.DefaultBranch) + "/" + escapePath(a.FilePath)
	return agentJSON{Name: a.Name, FilePath: a.FilePath, URL: u}
}

// escapePath escapes each segment of a slash-separated path.
func escapePath(p string) string {
	segments := strings.Split(p, "/")
	for i, s := range segments {
		segments[i] = url.PathEscape(s)
	}
	return strings.Join(segments, "/")
}
