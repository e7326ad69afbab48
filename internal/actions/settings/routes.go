package settings

import (
	"context"

	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// Handler serves the secrets, variables and Actions permissions
// endpoints.
type Handler struct {
	Service *Service
	// Environment finds the repository's environment by name (any case)
	// and returns its id; false when it has none.
	Environment func(ctx context.Context, repoID int64, name string) (int64, bool, error)
}

// Routes is the route table, with the platform's access: a repository's
// secrets and variables are read by writers and written by administrators
// (classic tokens: repo; fine-grained: Secrets or Variables, environment
// variables Environments); an organization's by its owners (admin:org;
// Secrets or Variables of the organization); a repository's Dependabot
// secrets with Dependabot secrets, an organization's with its Secrets. Actions permissions and repositories'
// runners are read and written by administrators (Administration);
// organizations' runners and runner groups by owners (Self-hosted
// runners). The runner registration endpoints take a registration or
// remove token instead of credentials.
func (h *Handler) Routes() []httpapi.Route {
	var out []httpapi.Route
	out = append(out, h.secretRoutes()...)
	out = append(out, h.variableRoutes()...)
	out = append(out, h.permissionRoutes()...)
	out = append(out, h.runnerRoutes()...)
	out = append(out, h.groupRoutes()...)
	out = append(out, h.moreRoutes()...)
	return out
}

// repoRule is the rule of a repository route needing role, opened for
// fine-grained tokens by perm (none when "").
func repoRule(role auth.Role, perm string) auth.Rule {
	r := auth.Rule{Target: auth.TargetRepo, Role: role, Scopes: []string{"repo"}}
	if perm != "" {
		r.Permissions, r.TokenTypes = auth.Perm(perm), auth.AllTokenTypes
	}
	return r
}

// orgRule is the rule of an organization route (owners), opened for
// fine-grained tokens by perm (none when "").
func orgRule(perm string) auth.Rule {
	r := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleAdmin, Scopes: []string{"admin:org"}}
	if perm != "" {
		r.Permissions, r.TokenTypes = auth.Perm(perm), auth.AllTokenTypes
	}
	return r
}

// secretRoutes are the Actions and Dependabot secrets of repositories,
// environments and organizations.
func (h *Handler) secretRoutes() []httpapi.Route {
	var out []httpapi.Route
	for _, k := range []struct {
		kind, seg                     string
		repoRead, repoWrite, orgPerms string
	}{
		{KindSecret, "actions", "secrets:read", "secrets:write", "organization_secrets"},
		{KindDependabotSecret, "dependabot", "dependabot_secrets:read", "dependabot_secrets:write", "organization_secrets"},
	} {
		repo := "/repos/{owner}/{repo}/" + k.seg + "/secrets"
		org := "/orgs/{org}/" + k.seg + "/secrets"
		read, write := repoRule(auth.RoleWrite, k.repoRead), repoRule(auth.RoleAdmin, k.repoWrite)
		orgRead, orgWrite := orgRule(suffix(k.orgPerms, ":read")), orgRule(suffix(k.orgPerms, ":write"))
		kind := k.kind
		out = append(out,
			httpapi.Route{Method: "GET", Pattern: repo, Handle: h.listSecrets(kind, repoPlaceOf), Auth: read},
			httpapi.Route{Method: "GET", Pattern: repo + "/public-key", Handle: h.publicKey(repoPlaceOf), Auth: read},
			httpapi.Route{Method: "GET", Pattern: repo + "/{secret_name}", Handle: h.getSecret(kind, repoPlaceOf), Auth: read},
			httpapi.Route{Method: "PUT", Pattern: repo + "/{secret_name}", Handle: h.putSecret(kind, repoPlaceOf), Auth: write},
			httpapi.Route{Method: "DELETE", Pattern: repo + "/{secret_name}", Handle: h.deleteValue(kind, repoPlaceOf, "secret_name"), Auth: write},
			httpapi.Route{Method: "GET", Pattern: org, Handle: h.listSecrets(kind, orgPlaceOf), Auth: orgRead},
			httpapi.Route{Method: "GET", Pattern: org + "/public-key", Handle: h.publicKey(orgPlaceOf), Auth: orgRead},
			httpapi.Route{Method: "GET", Pattern: org + "/{secret_name}", Handle: h.getSecret(kind, orgPlaceOf), Auth: orgRead},
			httpapi.Route{Method: "PUT", Pattern: org + "/{secret_name}", Handle: h.putSecret(kind, orgPlaceOf), Auth: orgWrite},
			httpapi.Route{Method: "DELETE", Pattern: org + "/{secret_name}", Handle: h.deleteValue(kind, orgPlaceOf, "secret_name"), Auth: orgWrite},
		)
		out = append(out, h.selectedRoutes(kind, org+"/{secret_name}", "secret_name", orgRead, orgWrite)...)
	}
	read, write := repoRule(auth.RoleWrite, "secrets:read"), repoRule(auth.RoleAdmin, "secrets:write")
	env := "/repos/{owner}/{repo}/environments/{environment_name}/secrets"
	envPlace := h.envPlaceOf
	return append(out,
		httpapi.Route{Method: "GET", Pattern: "/repos/{owner}/{repo}/actions/organization-secrets", Handle: h.listRepoOrgValues(KindSecret), Auth: read},
		httpapi.Route{Method: "GET", Pattern: env, Handle: h.listSecrets(KindSecret, envPlace), Auth: read},
		httpapi.Route{Method: "GET", Pattern: env + "/public-key", Handle: h.publicKey(envPlace), Auth: read},
		httpapi.Route{Method: "GET", Pattern: env + "/{secret_name}", Handle: h.getSecret(KindSecret, envPlace), Auth: read},
		httpapi.Route{Method: "PUT", Pattern: env + "/{secret_name}", Handle: h.putSecret(KindSecret, envPlace), Auth: write},
		httpapi.Route{Method: "DELETE", Pattern: env + "/{secret_name}", Handle: h.deleteValue(KindSecret, envPlace, "secret_name"), Auth: write},
	)
}

// variableRoutes are the Actions variables of repositories, environments
// and organizations.
func (h *Handler) variableRoutes() []httpapi.Route {
	const repo = "/repos/{owner}/{repo}/actions/variables"
	const env = "/repos/{owner}/{repo}/environments/{environment_name}/variables"
	const org = "/orgs/{org}/actions/variables"
	read, write := repoRule(auth.RoleWrite, "variables:read"), repoRule(auth.RoleAdmin, "variables:write")
	envRead, envWrite := repoRule(auth.RoleWrite, "environments:read"), repoRule(auth.RoleAdmin, "environments:write")
	orgRead, orgWrite := orgRule("organization_variables:read"), orgRule("organization_variables:write")
	out := []httpapi.Route{
		{Method: "GET", Pattern: "/repos/{owner}/{repo}/actions/organization-variables", Handle: h.listRepoOrgValues(KindVariable), Auth: read},
	}
	for _, p := range []struct {
		path        string
		place       placeFunc
		read, write auth.Rule
	}{
		{repo, repoPlaceOf, read, write},
		{env, h.envPlaceOf, envRead, envWrite},
		{org, orgPlaceOf, orgRead, orgWrite},
	} {
		out = append(out,
			httpapi.Route{Method: "GET", Pattern: p.path, Handle: h.listVariables(p.place), Auth: p.read},
			httpapi.Route{Method: "POST", Pattern: p.path, Handle: h.createVariable(p.place), Auth: p.write},
			httpapi.Route{Method: "GET", Pattern: p.path + "/{name}", Handle: h.getVariable(p.place), Auth: p.read},
			httpapi.Route{Method: "PATCH", Pattern: p.path + "/{name}", Handle: h.updateVariable(p.place), Auth: p.write},
			httpapi.Route{Method: "DELETE", Pattern: p.path + "/{name}", Handle: h.deleteValue(KindVariable, p.place, "name"), Auth: p.write},
		)
	}
	return append(out, h.selectedRoutes(KindVariable, org+"/{name}", "name", orgRead, orgWrite)...)
}

// selectedRoutes are the selected repositories of an organization's
// values at path.
func (h *Handler) selectedRoutes(kind, path, param string, read, write auth.Rule) []httpapi.Route {
	return []httpapi.Route{
		{Method: "GET", Pattern: path + "/repositories", Handle: h.listSelected(kind, param), Auth: read},
		{Method: "PUT", Pattern: path + "/repositories", Handle: h.setSelected(kind, param), Auth: write},
		{Method: "PUT", Pattern: path + "/repositories/{repository_id}", Handle: h.addSelected(kind, param), Auth: write},
		{Method: "DELETE", Pattern: path + "/repositories/{repository_id}", Handle: h.removeSelected(kind, param), Auth: write},
	}
}

// suffix appends s to perm, "" staying "".
func suffix(perm, s string) string {
	if perm == "" {
		return ""
	}
	return perm + s
}
