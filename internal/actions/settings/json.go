package settings

import (
	"net/url"

	"forgeapi/internal/wire"
)

// secretJSON is the platform's actions-secret and dependabot-secret, and
// with Visibility their organization forms.
type secretJSON struct {
	Name                    string    `json:"name"`
	CreatedAt               wire.Time `json:"created_at"`
	UpdatedAt               wire.Time `json:"updated_at"`
	Visibility              string    `json:"visibility,omitempty"`
	SelectedRepositoriesURL string    `json:"selected_repositories_url,omitempty"`
}

// variableJSON is the platform's actions-variable, and with Visibility
// organization-actions-variable.
type variableJSON struct {
	Name                    string    `json:"name"`
	Value                   string    `json:"value"`
	CreatedAt               wire.Time `json:"created_at"`
	UpdatedAt               wire.Time `json:"updated_at"`
	Visibility              string    `json:"visibility,omitempty"`
	SelectedRepositoriesURL string    `json:"selected_repositories_url,omitempty"`
}

// publicKeyJSON is the platform's actions-public-key.
type publicKeyJSON struct {
	KeyID string `json:"key_id"`
	Key   string `json:"key"`
}

// selectedURL is the selected_repositories_url of an organization's
// value, "" for others.
func selectedURL(base, org string, v *Value) string {
	if v.Place.Scope != ScopeOrg {
		return ""
	}
	path := map[string]string{KindSecret: "/actions/secrets/", KindDependabotSecret: "/dependabot/secrets/",
		KindVariable: "/actions/variables/"}[v.Kind]
	return base + "/orgs/" + org + path + url.PathEscape(v.Name) + "/repositories"
}

// toSecretJSON renders a secret without its value; org is the
// organization's login (for its URL), "" for other places.
func toSecretJSON(base, org string, v *Value) secretJSON {
	j := secretJSON{Name: v.Name, CreatedAt: wire.T(v.CreatedAt), UpdatedAt: wire.T(v.UpdatedAt)}
	if v.Place.Scope == ScopeOrg {
		j.Visibility, j.SelectedRepositoriesURL = v.Visibility, selectedURL(base, org, v)
	}
	return j
}

// toVariableJSON renders a variable.
func toVariableJSON(base, org string, v *Value) variableJSON {
	j := variableJSON{Name: v.Name, Value: v.Value, CreatedAt: wire.T(v.CreatedAt), UpdatedAt: wire.T(v.UpdatedAt)}
	if v.Place.Scope == ScopeOrg {
		j.Visibility, j.SelectedRepositoriesURL = v.Visibility, selectedURL(base, org, v)
	}
	return j
}
