package dependabot

import (
	"encoding/json"
	"fmt"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// alertJSON is the platform's dependabot-alert (with Repository,
// dependabot-alert-with-repository).
type alertJSON struct {
	Number                int64                 `json:"number"`
	State                 string                `json:"state"`
	Dependency            dependencyJSON        `json:"dependency"`
	SecurityAdvisory      json.RawMessage       `json:"security_advisory"`
	SecurityVulnerability json.RawMessage       `json:"security_vulnerability"`
	URL                   string                `json:"url"`
	HTMLURL               string                `json:"html_url"`
	CreatedAt             wire.Time             `json:"created_at"`
	UpdatedAt             wire.Time             `json:"updated_at"`
	DismissedAt           *wire.Time            `json:"dismissed_at"`
	DismissedBy           *accounts.SimpleUser  `json:"dismissed_by"`
	DismissedReason       *string               `json:"dismissed_reason"`
	DismissedComment      *string               `json:"dismissed_comment"`
	FixedAt               *wire.Time            `json:"fixed_at"`
	AutoDismissedAt       *wire.Time            `json:"auto_dismissed_at"`
	Assignees             []accounts.SimpleUser `json:"assignees"`
	Repository            *repos.SimpleJSON     `json:"repository,omitempty"`
}

type dependencyJSON struct {
	Package      packageJSON `json:"package"`
	ManifestPath string      `json:"manifest_path"`
	Scope        *string     `json:"scope"`
	Relationship string      `json:"relationship"`
}

// view renders one request's or one event's alerts.
type view struct {
	base  string
	users map[int64]*accounts.Account
}

func (v view) user(id *int64) *accounts.SimpleUser {
	if id == nil || v.users[*id] == nil {
		return nil
	}
	u := accounts.ToSimpleUser(v.base, v.users[*id])
	return &u
}

func (v view) alert(repo *repos.Repository, a *Alert, withRepo bool) (alertJSON, error) {
	if !json.Valid([]byte(a.Advisory)) || !json.Valid([]byte(a.Vulnerability)) {
		return alertJSON{}, fmt.Errorf("dependabot alert %d: stored advisory is not JSON", a.ID)
	}
	j := alertJSON{
		Number: a.Number, State: a.State,
		Dependency: dependencyJSON{Package: packageJSON{Ecosystem: a.Ecosystem, Name: a.Package}, ManifestPath: a.ManifestPath,
			Scope: a.Scope, Relationship: "unknown"},
		SecurityAdvisory: json.RawMessage(a.Advisory), SecurityVulnerability: json.RawMessage(a.Vulnerability),
		URL:       fmt.Sprintf("%s/repos/%s/dependabot/alerts/%d", v.base, repo.FullName(), a.Number),
		HTMLURL:   fmt.Sprintf("%s/%s/security/dependabot/%d", accounts.WebBase(v.base), repo.FullName(), a.Number),
		CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt), DismissedAt: wire.TP(a.DismissedAt),
		DismissedBy: v.user(a.DismissedByID), DismissedReason: a.DismissedReason, DismissedComment: a.DismissedComment,
		FixedAt: wire.TP(a.FixedAt), Assignees: []accounts.SimpleUser{},
	}
	if withRepo {
		full := repos.ToJSON(repos.URLs{Base: v.base}, repo, repos.Stats{}, 0)
		simple := full.Simple()
		j.Repository = &simple
	}
	return j, nil
}
