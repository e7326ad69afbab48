// Package agents serves the enterprise custom agents API (spec endpoints
// 11-14). An enterprise designates one of its organizations as the source
// of its custom agents: that organization's .service-private repository
// holds the agent definitions (agents/*.md, read from the default branch,
// named by their YAML front matter) and the assistant's command-line client
// settings (.service/assistant/settings.json, which must be a JSON object
// when present). Setting the source creates, by default, an enterprise
// ruleset that protects agents/*.md and .service/agents/*.md in that
// repository; CheckPush, registered with the git server, enforces it.
//
// Decisions where the spec is silent are documented on the functions and
// in the README ("Enterprise custom agents").
package agents

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// The names the spec fixes.
const (
	// RepositoryName is the source organization's repository that holds
	// the definitions (case-insensitive, as repository names are).
	RepositoryName = ".service-private"
	// AgentsDir is the directory of the agent definitions.
	AgentsDir = "agents"
	// SettingsPath is the assistant's client settings file.
	SettingsPath = ".service/assistant/settings.json"
)

// Service keeps each enterprise's custom agents source and reads the
// definitions from git.
type Service struct {
	DB    *store.DB
	Repos *repos.Service
	names nameCache
}

// Source is an enterprise's custom agents source.
type Source struct {
	Enterprise *accounts.Enterprise
	Org        *accounts.Account
	// Repo is the organization's .service-private repository; nil when it
	// no longer exists.
	Repo *repos.Repository
	// Ruleset protects the definitions; nil when none was created.
	Ruleset   *Ruleset
	CreatedAt time.Time
	UpdatedAt time.Time
}

// ErrNoSource is returned when the enterprise has no custom agents source.
var ErrNoSource = errors.New("agents: no custom agents source")

// Source returns the enterprise's custom agents source, or ErrNoSource.
func (s *Service) Source(ctx context.Context, ent *accounts.Enterprise) (*Source, error) {
	return loadSource(ctx, s.DB, ent)
}

func loadSource(ctx context.Context, q store.Q, ent *accounts.Enterprise) (*Source, error) {
	src := &Source{Enterprise: ent}
	var orgID int64
	err := q.QueryRowContext(ctx, `SELECT org_id, created_at, updated_at FROM custom_agent_sources WHERE enterprise_id = $1`, ent.ID).
		Scan(&orgID, &src.CreatedAt, &src.UpdatedAt)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return nil, ErrNoSource
	} else if err != nil {
		return nil, err
	}
	if src.Org, err = accounts.ByID(ctx, q, orgID); err != nil {
		return nil, err
	}
	src.Repo, err = repos.ByOwnerAndName(ctx, q, src.Org.Login, RepositoryName)
	if errors.Is(err, store.ErrNotFound) {
		src.Repo, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	src.Ruleset, err = managedRuleset(ctx, q, ent.ID)
	return src, err
}

// resource names the source in validation errors.
const resource = "CustomAgentsSource"

// invalidSource is the 422 of a PUT whose organization cannot be the
// source: its top-level message says why, as does its one field error
// (organization_id, code custom).
func invalidSource(format string, args ...any) *apierr.Error {
	err := apierr.Custom(resource, "organization_id", format, args...)
	err.Message = err.Errors[0].Message
	return err
}

// SetSource makes the organization the enterprise's custom agents source,
// replacing any earlier one. The organization must belong to the
// enterprise and have a .service-private repository whose client settings
// file, when present on its default branch, is a JSON object: a 422 names
// what is wrong otherwise. With createRuleset the protecting ruleset is
// created, or moved to the new source (keeping its id); without it any
// earlier one is removed, so that no ruleset protects an organization that
// is not the source.
func (s *Service) SetSource(ctx context.Context, ent *accounts.Enterprise, orgID int64, createRuleset bool) (*Source, error) {
	org, repo, err := s.validateSource(ctx, ent, orgID)
	if err != nil {
		return nil, err
	}
	var src *Source
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		_, err := tx.ExecContext(ctx, `
			INSERT INTO custom_agent_sources (enterprise_id, org_id, created_at, updated_at) VALUES ($1, $2, $3, $3)
			ON CONFLICT (enterprise_id) DO UPDATE SET org_id = excluded.org_id, updated_at = excluded.updated_at`,
			ent.ID, org.ID, now)
		if err != nil {
			return err
		}
		if createRuleset {
			_, err = putManagedRuleset(ctx, tx, ent.ID, org.ID, repo.Name)
		} else {
			err = deleteManagedRuleset(ctx, tx, ent.ID)
		}
		if err != nil {
			return err
		}
		src, err = loadSource(ctx, tx, ent)
		return err
	})
	return src, err
}

// validateSource returns the organization and its .service-private
// repository when they may become the enterprise's source.
func (s *Service) validateSource(ctx context.Context, ent *accounts.Enterprise, orgID int64) (*accounts.Account, *repos.Repository, error) {
	inEnterprise, err := accounts.EnterpriseHasOrg(ctx, s.DB, ent.ID, orgID)
	if err != nil {
		return nil, nil, err
	}
	if !inEnterprise {
		return nil, nil, invalidSource("Organization %d is not an organization of the enterprise %s.", orgID, ent.Slug)
	}
	org, err := accounts.ByID(ctx, s.DB, orgID)
	if err != nil {
		return nil, nil, err
	}
	repo, err := repos.ByOwnerAndName(ctx, s.DB, org.Login, RepositoryName)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil, invalidSource("The organization %s has no %s repository; create it with the agent definitions first.", org.Login, RepositoryName)
	}
	if err != nil {
		return nil, nil, err
	}
	if _, err := s.ClientSettings(ctx, repo); err != nil {
		return nil, nil, err
	}
	return org, repo, nil
}

// DeleteSource removes the enterprise's custom agents source and its
// ruleset: the association only, never the repository or its files. It
// returns ErrNoSource when there is none.
func (s *Service) DeleteSource(ctx context.Context, ent *accounts.Enterprise) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM custom_agent_sources WHERE enterprise_id = $1`, ent.ID)
		if err != nil {
			return err
		}
		if n, err := res.RowsAffected(); err != nil {
			return err
		} else if n == 0 {
			return ErrNoSource
		}
		return deleteManagedRuleset(ctx, tx, ent.ID)
	})
}
