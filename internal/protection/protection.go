// Package protection is branch protection as the REST API sets it: one
// rule per repository and branch name (wildcard patterns are rulesets'
// business), with its required status checks, required pull request
// reviews, admin enforcement, required signatures, push restrictions by
// user, team and app, linear history, force pushes, deletions, creations,
// conversation resolution and the branch lock. The rule is enforced in
// one place for every way a branch moves: CheckPush, a githost.PushCheck,
// refuses git pushes and server pushes (contents, refs, merges) that break
// it with the platform's GH006 lines; pull requests' merges ask MergeBlock
// and StatusBlock before they merge. Changes emit branch_protection_rule
// (created, edited, deleted) and, for organizations' repositories, the
// audit log's protected_branch.create, update and destroy.
package protection

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/checks"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Protection is the protection of one branch of a repository.
type Protection struct {
	ID        int64
	RepoID    int64
	Branch    string
	Settings  Settings
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Settings are what a protection requires; the zero value requires
// nothing beyond the protection's own defaults (no force push, no
// deletion).
type Settings struct {
	// StatusChecks, when set, are the checks a merge needs.
	StatusChecks *StatusChecks `json:"status_checks,omitempty"`
	// Reviews, when set, require changes through approved pull requests.
	Reviews *Reviews `json:"reviews,omitempty"`
	// EnforceAdmins applies the protection to administrators too.
	EnforceAdmins bool `json:"enforce_admins,omitempty"`
	// Signatures requires the new commits of git pushes to have verified
	// signatures (sigverify); the server's own commits (merges, the
	// contents API) are not signed yet and pass.
	Signatures bool `json:"signatures,omitempty"`
	// Restrictions, when set, are who may push (organizations only).
	Restrictions           *Actors `json:"restrictions,omitempty"`
	LinearHistory          bool    `json:"linear_history,omitempty"`
	ForcePushes            bool    `json:"force_pushes,omitempty"`
	Deletions              bool    `json:"deletions,omitempty"`
	BlockCreations         bool    `json:"block_creations,omitempty"`
	ConversationResolution bool    `json:"conversation_resolution,omitempty"`
	LockBranch             bool    `json:"lock_branch,omitempty"`
	ForkSyncing            bool    `json:"fork_syncing,omitempty"`
}

// StatusChecks are required status checks.
type StatusChecks struct {
	// Strict requires the head to be up to date with the base.
	Strict bool    `json:"strict,omitempty"`
	Checks []Check `json:"checks"`
}

// Contexts are the checks' names.
func (c *StatusChecks) Contexts() []string {
	out := []string{}
	for _, ch := range c.Checks {
		out = append(out, ch.Context)
	}
	return out
}

// Check is one required check: its context (a status's context or a
// check run's name) and, when not nil, the app that must report it.
type Check struct {
	Context string `json:"context"`
	AppID   *int64 `json:"app_id,omitempty"`
}

// Reviews are required pull request reviews.
type Reviews struct {
	Count        int     `json:"count"`
	DismissStale bool    `json:"dismiss_stale,omitempty"`
	CodeOwners   bool    `json:"code_owners,omitempty"`
	LastPush     bool    `json:"last_push,omitempty"`
	Dismissal    *Actors `json:"dismissal,omitempty"`
	Bypass       *Actors `json:"bypass,omitempty"`
}

// Actors are users, teams and apps, by id.
type Actors struct {
	Users []int64 `json:"users"`
	Teams []int64 `json:"teams"`
	Apps  []int64 `json:"apps"`
}

// Outcome is the state of one check of a commit: a commit status's
// latest state by context, or a check run by name (checks.Outcomes).
type Outcome = checks.Outcome

// Service stores branch protections, emits their events and enforces
// them.
type Service struct {
	DB     *store.DB
	Events *events.Bus
}

// ErrNotProtected is the 404 of a branch without protection.
var ErrNotProtected = errors.New("branch not protected")

// Of returns the protection of the repository's branch, or
// ErrNotProtected.
func Of(ctx context.Context, q store.Q, repoID int64, branch string) (*Protection, error) {
	p := &Protection{RepoID: repoID, Branch: branch}
	var settings string
	err := q.QueryRowContext(ctx, `SELECT id, settings, created_at, updated_at FROM branch_protections
		WHERE repository_id = $1 AND branch = $2`, repoID, branch).Scan(&p.ID, &settings, &p.CreatedAt, &p.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotProtected
	} else if err != nil {
		return nil, store.Normalize(err)
	}
	return p, json.Unmarshal([]byte(settings), &p.Settings)
}

// Protected returns the names of the repository's protected branches.
func Protected(ctx context.Context, q store.Q, repoID int64) (map[string]bool, error) {
	rows, err := q.QueryContext(ctx, `SELECT branch FROM branch_protections WHERE repository_id = $1`, repoID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := map[string]bool{}
	for rows.Next() {
		var b string
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		out[b] = true
	}
	return out, rows.Err()
}

// Change is a change of a branch's settings; ErrNotProtected (or any
// error) leaves them. q is Update's transaction: a change that reads
// (resolving the names of a request) reads through it.
type Change func(q store.Q, s *Settings) error

// Update changes the protection of the repository's branch in one
// transaction and emits branch_protection_rule edited, or created when
// create is set and the branch had none (without create, an unprotected
// branch is ErrNotProtected). It returns the protection as changed. Two
// changes that create the same protection at once (PostgreSQL) end as a
// creation and an edit.
func (s *Service) Update(ctx context.Context, repo *repos.Repository, actor *accounts.Account, branch string, create bool, change Change) (*Protection, error) {
	p, err := s.update(ctx, repo, actor, branch, create, change)
	if errors.Is(err, store.ErrConflict) {
		return s.update(ctx, repo, actor, branch, create, change)
	}
	return p, err
}

func (s *Service) update(ctx context.Context, repo *repos.Repository, actor *accounts.Account, branch string, create bool, change Change) (*Protection, error) {
	var out *Protection
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, err := Of(ctx, tx, repo.ID, branch)
		created := false
		if errors.Is(err, ErrNotProtected) && create {
			p, created, err = &Protection{RepoID: repo.ID, Branch: branch, CreatedAt: tx.Now()}, true, nil
		}
		if err != nil {
			return err
		}
		before := p.Settings
		if err := change(tx, &p.Settings); err != nil {
			return err
		}
		p.UpdatedAt = tx.Now()
		if err := save(ctx, tx, p); err != nil {
			return err
		}
		out = p
		action, audit := "edited", "protected_branch.update"
		if created {
			action, audit = "created", "protected_branch.create"
		}
		return s.emit(ctx, tx, repo, actor, action, audit, p, &before)
	})
	return out, err
}

// Delete removes the protection of the repository's branch and emits
// branch_protection_rule deleted; ErrNotProtected when it has none.
func (s *Service) Delete(ctx context.Context, repo *repos.Repository, actor *accounts.Account, branch string) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		p, err := Of(ctx, tx, repo.ID, branch)
		if err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM branch_protections WHERE id = $1`, p.ID); err != nil {
			return err
		}
		return s.emit(ctx, tx, repo, actor, "deleted", "protected_branch.destroy", p, nil)
	})
}

func save(ctx context.Context, tx *store.Tx, p *Protection) error {
	settings, err := json.Marshal(p.Settings)
	if err != nil {
		return err
	}
	if p.ID != 0 {
		_, err := tx.ExecContext(ctx, `UPDATE branch_protections SET settings = $1, updated_at = $2 WHERE id = $3`,
			string(settings), p.UpdatedAt, p.ID)
		return err
	}
	return store.Normalize(tx.QueryRowContext(ctx, `INSERT INTO branch_protections (repository_id, branch, settings, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5) RETURNING id`, p.RepoID, p.Branch, string(settings), p.CreatedAt, p.UpdatedAt).Scan(&p.ID))
}

// emit sends branch_protection_rule with the rule in its webhook form
// (and, for edited, what changed from before), and records the audit
// log entry of an organization's repository.
func (s *Service) emit(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, action, audit string, p *Protection, before *Settings) error {
	rule, err := hookRule(ctx, tx, p)
	if err != nil {
		return err
	}
	payload := map[string]any{"action": action, "rule": rule}
	if before != nil && action == "edited" {
		old, err := hookRule(ctx, tx, &Protection{ID: p.ID, RepoID: p.RepoID, Branch: p.Branch, Settings: *before,
			CreatedAt: p.CreatedAt, UpdatedAt: p.UpdatedAt})
		if err != nil {
			return err
		}
		payload["changes"] = changes(old, rule)
	}
	if err := s.Events.Emit(ctx, tx, &events.Event{HookEvent: "branch_protection_rule", HookPayload: payload,
		Actor: actor, Repo: repo, Public: !repo.Private, CreatedAt: tx.Now()}); err != nil {
		return err
	}
	if !repo.Owner.IsOrg() {
		return nil
	}
	return auditlog.Record(ctx, tx, auditlog.Entry{OrgID: repo.Owner.ID, Action: audit, Actor: actor, Repo: repo.FullName(),
		Data: map[string]any{"name": p.Branch}})
}

// OutcomesOf returns the outcomes of the commit's checks by name: its
// check runs and its commit statuses (checks.Outcomes).
func (s *Service) OutcomesOf(ctx context.Context, q store.Q, repoID int64, sha string) (map[string]Outcome, error) {
	return checks.Outcomes(ctx, q, repoID, sha)
}

// List returns the repository's protections, oldest first.
func List(ctx context.Context, q store.Q, repoID int64) ([]*Protection, error) {
	rows, err := q.QueryContext(ctx, `SELECT id, branch, settings, created_at, updated_at FROM branch_protections
		WHERE repository_id = $1 ORDER BY id`, repoID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Protection
	for rows.Next() {
		p := &Protection{RepoID: repoID}
		var settings string
		if err := rows.Scan(&p.ID, &p.Branch, &settings, &p.CreatedAt, &p.UpdatedAt); err != nil {
			return nil, err
		}
		if err := json.Unmarshal([]byte(settings), &p.Settings); err != nil {
			return nil, err
		}
		out = append(out, p)
	}
	return out, rows.Err()
}

// ByID returns the protection with the id, or ErrNotProtected.
func ByID(ctx context.Context, q store.Q, id int64) (*Protection, error) {
	p := &Protection{ID: id}
	var settings string
	err := q.QueryRowContext(ctx, `SELECT repository_id, branch, settings, created_at, updated_at FROM branch_protections
		WHERE id = $1`, id).Scan(&p.RepoID, &p.Branch, &settings, &p.CreatedAt, &p.UpdatedAt)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ErrNotProtected
	} else if err != nil {
		return nil, store.Normalize(err)
	}
	return p, json.Unmarshal([]byte(settings), &p.Settings)
}
