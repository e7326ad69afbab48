// Package rulesets is the general ruleset engine: organization rulesets
// (/orgs/{org}/rulesets) and repository rulesets
// (/repos/{owner}/{repo}/rulesets, which select their own repository),
// with the rules git itself can enforce on a push
// (creation, update, deletion, non_fast_forward, required_linear_history
// for branches and tags; file_path_restriction, file_extension_restriction,
// max_file_size for pushes), their conditions (repository names, reference
// names with ~DEFAULT_BRANCH and ~ALL), enforcement (active blocks,
// evaluate and disabled do not) and bypass actors (OrganizationAdmin,
// RepositoryRole, Integration, User, Team). Service.CheckPush is the githost
// push check that enforces them on every git push and every server push
// (the contents and git refs API).
package rulesets

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"forgeapi/internal/store"
)

// Targets, enforcements and the rule types forgeapi enforces.
const (
	TargetBranch = "branch"
	TargetTag    = "tag"
	TargetPush   = "push"

	EnforcementDisabled = "disabled"
	EnforcementActive   = "active"
	EnforcementEvaluate = "evaluate"
)

// Ruleset is an organization's or a repository's ruleset. Its
// conditions, bypass actors and rules have the platform's JSON shapes, in
// which they are stored.
type Ruleset struct {
	ID    int64
	OrgID int64 // the organization, or the repository's owner
	// RepoID is the repository of a repository ruleset, 0 for an
	// organization's.
	RepoID       int64
	Name         string
	Target       string
	Enforcement  string
	Conditions   Conditions
	BypassActors []BypassActor
	Rules        []Rule
	CreatedAt    time.Time
	UpdatedAt    time.Time
}

// Conditions select the repositories (by name) and, for branch and tag
// rulesets, the references a ruleset applies to.
type Conditions struct {
	RefName        *Patterns     `json:"ref_name,omitempty"`
	RepositoryName *NamePatterns `json:"repository_name,omitempty"`
}

// Patterns are include and exclude patterns: a name matches when one
// include pattern matches it and no exclude pattern does.
type Patterns struct {
	Include []string `json:"include"`
	Exclude []string `json:"exclude"`
}

// NamePatterns are repository name patterns. Protected prevents renaming
// the repositories they select (Service.CheckRepositoryUpdate).
type NamePatterns struct {
	Patterns
	Protected bool `json:"protected"`
}

// BypassActor may push past a ruleset's rules.
type BypassActor struct {
	ActorID    *int64 `json:"actor_id"`
	ActorType  string `json:"actor_type"`
	BypassMode string `json:"bypass_mode"`
}

// Rule is one rule with its parameters (nil for the rules that have none).
type Rule struct {
	Type       string      `json:"type"`
	Parameters *Parameters `json:"parameters,omitempty"`
}

// Parameters holds the parameters of every enforced rule type; a rule
// sets only its own.
type Parameters struct {
	UpdateAllowsFetchAndMerge *bool    `json:"update_allows_fetch_and_merge,omitempty"`
	RestrictedFilePaths       []string `json:"restricted_file_paths,omitempty"`
	RestrictedFileExtensions  []string `json:"restricted_file_extensions,omitempty"`
	MaxFileSize               int64    `json:"max_file_size,omitempty"` // megabytes
}

const columns = `id, org_id, COALESCE(repository_id, 0), name, target, enforcement, conditions, bypass_actors, rules, created_at, updated_at`

func scan(row interface{ Scan(...any) error }) (*Ruleset, error) {
	var rs Ruleset
	var conditions, actors, rules string
	err := row.Scan(&rs.ID, &rs.OrgID, &rs.RepoID, &rs.Name, &rs.Target, &rs.Enforcement, &conditions, &actors, &rules,
		&rs.CreatedAt, &rs.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	for _, f := range []struct {
		raw string
		v   any
	}{{conditions, &rs.Conditions}, {actors, &rs.BypassActors}, {rules, &rs.Rules}} {
		if err := json.Unmarshal([]byte(f.raw), f.v); err != nil {
			return nil, fmt.Errorf("rulesets: ruleset %d: %w", rs.ID, err)
		}
	}
	return &rs, nil
}

// encoded returns the JSON columns of the ruleset.
func (rs *Ruleset) encoded() (conditions, actors, rules string, err error) {
	c, err := json.Marshal(rs.Conditions)
	if err != nil {
		return "", "", "", err
	}
	a, err := json.Marshal(rs.BypassActors)
	if err != nil {
		return "", "", "", err
	}
	r, err := json.Marshal(rs.Rules)
	return string(c), string(a), string(r), err
}

// insert stores a new ruleset and sets its id and times; a name the
// organization has already is store.ErrConflict.
func insert(ctx context.Context, q store.Q, rs *Ruleset) error {
	c, a, r, err := rs.encoded()
	if err != nil {
		return err
	}
	rs.CreatedAt = store.Now()
	rs.UpdatedAt = rs.CreatedAt
	var repoID *int64
	if rs.RepoID != 0 {
		repoID = &rs.RepoID
	}
	err = q.QueryRowContext(ctx, `INSERT INTO org_rulesets (org_id, repository_id, name, target, enforcement, conditions,
		bypass_actors, rules, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id`,
		rs.OrgID, repoID, rs.Name, rs.Target, rs.Enforcement, c, a, r, rs.CreatedAt).Scan(&rs.ID)
	return store.Normalize(err)
}

// update stores the ruleset's fields and sets its update time.
func update(ctx context.Context, q store.Q, rs *Ruleset) error {
	c, a, r, err := rs.encoded()
	if err != nil {
		return err
	}
	rs.UpdatedAt = store.Now()
	_, err = q.ExecContext(ctx, `UPDATE org_rulesets SET name = $1, target = $2, enforcement = $3, conditions = $4,
		bypass_actors = $5, rules = $6, updated_at = $7 WHERE id = $8`,
		rs.Name, rs.Target, rs.Enforcement, c, a, r, rs.UpdatedAt, rs.ID)
	return store.Normalize(err)
}

// remove deletes the ruleset; store.ErrNotFound when none.
func remove(ctx context.Context, q store.Q, orgID, id int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM org_rulesets WHERE org_id = $1 AND id = $2`, orgID, id)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// ByID returns the organization's ruleset (not one of its repositories');
// store.ErrNotFound when none.
func ByID(ctx context.Context, q store.Q, orgID, id int64) (*Ruleset, error) {
	return scan(q.QueryRowContext(ctx, `SELECT `+columns+` FROM org_rulesets WHERE org_id = $1 AND id = $2
		AND repository_id IS NULL`, orgID, id))
}

// RepoRuleset returns the repository's own ruleset; store.ErrNotFound
// when none.
func RepoRuleset(ctx context.Context, q store.Q, repoID, id int64) (*Ruleset, error) {
	return scan(q.QueryRowContext(ctx, `SELECT `+columns+` FROM org_rulesets WHERE repository_id = $1 AND id = $2`, repoID, id))
}

// List returns the organization's own rulesets in id order; enforcing,
// when true, leaves out the disabled ones.
func List(ctx context.Context, q store.Q, orgID int64, enforcing bool) ([]*Ruleset, error) {
	return query(ctx, q, `SELECT `+columns+` FROM org_rulesets
		WHERE org_id = $1 AND repository_id IS NULL AND (NOT $2 OR enforcement <> 'disabled') ORDER BY id`, orgID, enforcing)
}

// ForRepo returns the rulesets of the repository's owner (an
// organization's, whatever their conditions) and the repository's own,
// in id order; parents false leaves out the owner's; enforcing leaves out
// the disabled ones.
func ForRepo(ctx context.Context, q store.Q, ownerID, repoID int64, parents, enforcing bool) ([]*Ruleset, error) {
	return query(ctx, q, `SELECT `+columns+` FROM org_rulesets
		WHERE org_id = $1 AND (repository_id = $2 OR ($3 AND repository_id IS NULL))
		AND (NOT $4 OR enforcement <> 'disabled') ORDER BY id`, ownerID, repoID, parents, enforcing)
}

func query(ctx context.Context, q store.Q, sql string, args ...any) ([]*Ruleset, error) {
	rows, err := q.QueryContext(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Ruleset
	for rows.Next() {
		rs, err := scan(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, rs)
	}
	return out, rows.Err()
}
