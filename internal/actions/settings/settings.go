// Package settings holds the configuration Actions and Dependabot read:
// secrets sealed as the platform seals them (a Curve25519 key pair per
// repository and organization; clients seal values with libsodium's
// sealed box and the server stores them as received), plain variables,
// the Actions permissions of repositories, organizations and enterprises,
// and self-hosted runners (registration and remove tokens, runners,
// labels, organizations' runner groups), with their REST endpoints.
//
// For the run machinery: RunValues gives a job its secrets (opened) and
// variables, ActionsEnabled whether a repository runs Actions,
// RunnerByCredential and SetRunnerStatus the runners that registered at
// RegisterPath.
//
// Values live in one table for the three kinds (Actions secrets,
// Dependabot secrets, variables) and three places (repository,
// organization, environment); an organization's value is visible to all
// of its repositories, its private ones, or the selected ones.
package settings

import (
	"time"

	"forgeapi/internal/secretbox"
	"forgeapi/internal/store"
)

// Service stores secrets, variables and Actions permissions. The
// platform sends no webhook for them; changes in an organization's places
// go to its audit log in the change's transaction.
type Service struct {
	DB *store.DB
	// Box seals the key pairs' private keys at rest.
	Box *secretbox.Box
	// Now is the clock of runner tokens' expiry; nil is the store's.
	Now func() time.Time
}

// clock is the time by s.Now, as the store keeps times.
func (s *Service) clock() time.Time {
	if s.Now == nil {
		return store.Now()
	}
	return s.Now().UTC().Truncate(time.Microsecond)
}

// The kinds of value.
const (
	KindSecret           = "secret"
	KindDependabotSecret = "dependabot_secret"
	KindVariable         = "variable"
)

// The places a value or key belongs to.
const (
	ScopeRepo       = "repo"
	ScopeOrg        = "org"
	ScopeEnv        = "env"
	ScopeEnterprise = "enterprise" // Actions permissions only
)

// The visibilities of an organization's value.
const (
	VisibilityAll      = "all"
	VisibilityPrivate  = "private"
	VisibilitySelected = "selected"
)

// Place is where a value is kept: a repository, an organization, or an
// environment of a repository (RepoID set too).
type Place struct {
	Scope  string
	ID     int64 // the repository's, organization's or environment's id
	RepoID int64 // the repository (ScopeRepo and ScopeEnv)
	// OrgID is the organization that owns the place, 0 when none: its
	// audit log records the changes.
	OrgID int64
}

// RepoPlace is a repository's place.
func RepoPlace(repoID, orgID int64) Place {
	return Place{Scope: ScopeRepo, ID: repoID, RepoID: repoID, OrgID: orgID}
}

// OrgPlace is an organization's place.
func OrgPlace(orgID int64) Place { return Place{Scope: ScopeOrg, ID: orgID, OrgID: orgID} }

// EnvPlace is an environment's place in its repository.
func EnvPlace(envID, repoID, orgID int64) Place {
	return Place{Scope: ScopeEnv, ID: envID, RepoID: repoID, OrgID: orgID}
}

// EnterprisePlace is an enterprise's place.
func EnterprisePlace(id int64) Place { return Place{Scope: ScopeEnterprise, ID: id} }

// keyPlace is the place whose key pair seals the place's secrets: an
// environment's secrets use its repository's key.
func (p Place) keyPlace() Place {
	if p.Scope == ScopeEnv {
		return Place{Scope: ScopeRepo, ID: p.RepoID, RepoID: p.RepoID, OrgID: p.OrgID}
	}
	return p
}

// foreignKeys are the place's repository, organization and environment
// columns (nil where the place is not one).
func (p Place) foreignKeys() (repo, org, env *int64) {
	id := p.ID
	switch p.Scope {
	case ScopeRepo:
		return &id, nil, nil
	case ScopeOrg:
		return nil, &id, nil
	default:
		return nil, nil, &id
	}
}

// Value is a secret or a variable. A secret's Value is its sealed box as
// the client sent it (base64), never shown.
type Value struct {
	ID         int64
	Kind       string
	Place      Place
	Name       string
	Value      string
	KeyID      string
	Visibility string // organizations only
	CreatedAt  time.Time
	UpdatedAt  time.Time
}

// now is the store's clock.
func now() time.Time { return store.Now() }
