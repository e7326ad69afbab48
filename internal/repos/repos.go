// Package repos holds repositories: their rows, their JSON shape, the
// repository endpoints and their bare git repositories on disk.
// Subpackages serve git over HTTP (githttp) and read history (gitread).
package repos

import (
	"context"
	"errors"
	"regexp"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/store"
)

// Repository is a repository row with its owner.
type Repository struct {
	ID               int64
	Owner            *accounts.Account
	Name             string
	Description      string
	Private          bool
	DefaultBranch    string
	AdvancedSecurity bool
	ForkOfID         int64 // 0 when not a fork
	MigrationLocked  bool
	CreatedAt        time.Time
	UpdatedAt        time.Time
	PushedAt         *time.Time
	Settings         Settings
	Topics           []string // as PUT .../topics set them, never nil
	IsTemplate       bool
	TemplateID       int64 // the template it was generated from; 0 for none
	// Archived repositories are read-only: pushes and the API's writes
	// are refused until they are unarchived.
	Archived bool
}

// FullName is OWNER/NAME.
func (r *Repository) FullName() string { return r.Owner.Login + "/" + r.Name }

// Visibility is "private" or "public".
func (r *Repository) Visibility() string {
	if r.Private {
		return "private"
	}
	return "public"
}

var namePattern = regexp.MustCompile(`^[A-Za-z0-9._-]{1,100}$`)

// ValidName reports whether s is a valid repository name: 1 to 100
// letters, digits, '.', '-' or '_', not "." or "..", not ending in ".git".
func ValidName(s string) bool {
	return namePattern.MatchString(s) && s != "." && s != ".." && !strings.HasSuffix(strings.ToLower(s), ".git")
}

const repoColumns = `r.id, r.name, r.description, r.private, r.default_branch, r.advanced_security,
	COALESCE(r.fork_of_id, 0), r.migration_locked, r.created_at, r.updated_at, r.pushed_at,
	r.settings, r.topics, r.is_template, COALESCE(r.template_id, 0), r.archived, ` + accounts.JoinedColumns

const repoFrom = ` FROM repositories r JOIN accounts a ON a.id = r.owner_id `

// scanRepo scans repoColumns, then the query's extra columns into extra.
func scanRepo(row interface{ Scan(...any) error }, extra ...any) (*Repository, error) {
	var r Repository
	var o accounts.Account
	var settings, topics string
	dest := append([]any{&r.ID, &r.Name, &r.Description, &r.Private, &r.DefaultBranch, &r.AdvancedSecurity,
		&r.ForkOfID, &r.MigrationLocked, &r.CreatedAt, &r.UpdatedAt, &r.PushedAt,
		&settings, &topics, &r.IsTemplate, &r.TemplateID, &r.Archived}, o.ScanDest()...)
	err := row.Scan(append(dest, extra...)...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	r.Owner = &o
	r.Topics = parseTopics(topics)
	if r.Settings, err = parseSettings(settings); err != nil {
		return nil, err
	}
	return &r, nil
}

// ByOwnerAndName returns the repository OWNER/NAME (both case-insensitive).
func ByOwnerAndName(ctx context.Context, q store.Q, owner, name string) (*Repository, error) {
	return scanRepo(q.QueryRowContext(ctx, `SELECT `+repoColumns+repoFrom+
		`WHERE lower(a.login) = lower($1) AND lower(r.name) = lower($2)`, owner, name))
}

// ByOwnerAndNameWithMembership is ByOwnerAndName that also returns, in
// the same query, the user's role in the organization that owns the
// repository: accounts.RoleOwner, accounts.RoleMember, or "" when the
// user is not a member or the owner is not an organization (userID 0:
// always ""). The access guard uses it to resolve a repository and the
// caller's standing on it in one round trip.
func ByOwnerAndNameWithMembership(ctx context.Context, q store.Q, owner, name string, userID int64) (*Repository, Standing, error) {
	var st Standing
	r, err := scanRepo(q.QueryRowContext(ctx, `SELECT `+repoColumns+`, COALESCE(m.role, ''), COALESCE((`+grantOf("r.id", "$3")+`), '')`+repoFrom+
		`LEFT JOIN org_members m ON m.org_id = a.id AND m.user_id = $3
		WHERE lower(a.login) = lower($1) AND lower(r.name) = lower($2)`, owner, name, userID), &st.OrgRole, &st.Collaborator)
	if err != nil {
		return nil, Standing{}, err
	}
	return r, st, nil
}

// Standing is a user's standing toward a repository besides owning it:
// their role in the owning organization (accounts.RoleOwner,
// accounts.RoleMember or "") and the highest permission they are granted
// on it as a collaborator or through a team (CollaboratorPull ...
// CollaboratorAdmin, or ""; see GrantedPermission).
type Standing struct {
	OrgRole      string
	Collaborator string
}

// The permissions of a collaborator, the platform's names.
const (
	CollaboratorPull     = "pull"
	CollaboratorTriage   = "triage"
	CollaboratorPush     = "push"
	CollaboratorMaintain = "maintain"
	CollaboratorAdmin    = "admin"
)

// CollaboratorPermission returns the user's collaborator permission on
// the repository, "" when they are not a collaborator.
func CollaboratorPermission(ctx context.Context, q store.Q, repoID, userID int64) (string, error) {
	var perm string
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT permission FROM repo_collaborators WHERE repository_id = $1 AND user_id = $2`,
		repoID, userID).Scan(&perm))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return perm, err
}

// CustomRolePermission is the permission (pull, triage, push, maintain)
// that the organization's custom repository role of the name (any case)
// gives, "" when the organization has no such role: a collaborator or team
// given the role's name is granted its base role.
func CustomRolePermission(ctx context.Context, q store.Q, orgID int64, name string) (string, error) {
	var base string
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT base_role FROM custom_repo_roles WHERE org_id = $1 AND lower(name) = lower($2)`,
		orgID, name).Scan(&base))
	switch {
	case errors.Is(err, store.ErrNotFound):
		return "", nil
	case err != nil:
		return "", err
	case base == "read":
		return CollaboratorPull, nil
	case base == "write":
		return CollaboratorPush, nil
	}
	return base, nil
}

// grantOf is the scalar subquery of the highest permission granted on
// the repository (SQL expression repoID) to the user (userID): the
// repo_grants view unites direct collaborators and teams, the one place
// access reads them.
func grantOf(repoID, userID string) string {
	return `SELECT g.permission FROM repo_grants g WHERE g.repository_id = ` + repoID + ` AND g.user_id = ` + userID +
		` ORDER BY g.rank DESC LIMIT 1`
}

// GrantedPermission returns the highest permission the user is granted on
// the repository, as a collaborator or through the teams they belong to
// ("" for none). Access decisions read it; CollaboratorPermission is the
// direct collaborator's alone.
func GrantedPermission(ctx context.Context, q store.Q, repoID, userID int64) (string, error) {
	var perm string
	err := store.Normalize(q.QueryRowContext(ctx, grantOf("$1", "$2"), repoID, userID).Scan(&perm))
	if errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return perm, err
}

// ByID returns the repository with the id.
func ByID(ctx context.Context, q store.Q, id int64) (*Repository, error) {
	return scanRepo(q.QueryRowContext(ctx, `SELECT `+repoColumns+repoFrom+`WHERE r.id = $1`, id))
}

// ByIDs returns the repositories of the ids that exist, by id, in one
// query (a list across repositories completes its rows with them, where
// one ByID a repository would cost a round trip each).
func ByIDs(ctx context.Context, q store.Q, ids []int64) (map[int64]*Repository, error) {
	out := make(map[int64]*Repository, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	list, err := list(ctx, q, store.Dynamic+`SELECT `+repoColumns+repoFrom+`WHERE r.id IN `+store.In(1, len(ids)), args...)
	for _, r := range list {
		out[r.ID] = r
	}
	return out, err
}

// ByOwner returns the repositories of an account, by name.
func ByOwner(ctx context.Context, q store.Q, ownerID int64) ([]*Repository, error) {
	return list(ctx, q, `SELECT `+repoColumns+repoFrom+`WHERE r.owner_id = $1 ORDER BY lower(r.name)`, ownerID)
}

// Affiliated returns the repositories the user owns, those of the
// organizations the user is a member of and those granted to the user
// (as a collaborator or through a team), by name: the candidates of
// GET /user/repos and of GraphQL's repositories(ownerAffiliations).
func Affiliated(ctx context.Context, q store.Q, userID int64) ([]*Repository, error) {
	return list(ctx, q, `SELECT `+repoColumns+repoFrom+`
		WHERE r.owner_id = $1 OR r.owner_id IN (SELECT org_id FROM org_members WHERE user_id = $1)
		   OR r.id IN (SELECT repository_id FROM repo_grants WHERE user_id = $1) ORDER BY lower(r.name)`, userID)
}

// All returns every repository, by id (forgeapi restore walks them).
func All(ctx context.Context, q store.Q) ([]*Repository, error) {
	return list(ctx, q, `SELECT `+repoColumns+repoFrom+`ORDER BY r.id`)
}

// Forks returns the repositories whose fork_of is the id, recursively.
func Forks(ctx context.Context, q store.Q, id int64) ([]*Repository, error) {
	return list(ctx, q, `
		WITH RECURSIVE network(id) AS (
			SELECT id FROM repositories WHERE fork_of_id = $1
			UNION SELECT r.id FROM repositories r JOIN network n ON r.fork_of_id = n.id)
		SELECT `+repoColumns+repoFrom+`WHERE r.id IN (SELECT id FROM network) ORDER BY r.id`, id)
}

func list(ctx context.Context, q store.Q, query string, args ...any) ([]*Repository, error) {
	rows, err := q.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*Repository
	for rows.Next() {
		r, err := scanRepo(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// NewRepository is what Insert needs.
type NewRepository struct {
	Owner            *accounts.Account
	Name             string
	Description      string
	Private          bool
	DefaultBranch    string
	AdvancedSecurity bool
	ForkOfID         int64
	// PushedAt is when the repository's git data was last pushed: nil for
	// a new, empty repository; a fork carries its source's.
	PushedAt *time.Time
	// Settings, when set, change DefaultSettings.
	Settings   *SettingsChanges
	IsTemplate bool
	TemplateID int64 // the template it is generated from; 0 for none
	// Files, when set, are the files of the root commit Create makes on
	// the default branch (TemplateFiles).
	Files []File
	// NoDefaultLabels leaves out the labels every new repository gets
	// (Service.DefaultLabels): test fixtures that name their own.
	NoDefaultLabels bool
}

// The length limits of a repository's fields, in characters.
const (
	MaxNameLength          = 100 // the platform's
	MaxDescriptionLength   = 350 // the platform's
	MaxDefaultBranchLength = 255
)

const resource = "Repository"

// Validate checks the fields a client sends.
func (n *NewRepository) Validate() error {
	if n.Name == "" {
		return apierr.Invalid(resource, "name", apierr.CodeMissingField)
	}
	if n.DefaultBranch == "" {
		n.DefaultBranch = "main"
	}
	var fields apierr.Fields
	checkName(&fields, n.Name)
	fields.MaxLength(resource, "description", n.Description, MaxDescriptionLength)
	checkBranchName(&fields, n.DefaultBranch)
	if n.Settings != nil {
		n.Settings.validate(&fields)
	}
	return fields.Err()
}

// checkName adds the field error of a name that is too long or not a
// valid repository name.
func checkName(fields *apierr.Fields, name string) {
	if fields.MaxLength(resource, "name", name, MaxNameLength) && !ValidName(name) {
		*fields = append(*fields, apierr.FieldError{Resource: resource, Field: "name", Code: apierr.CodeCustom,
			Message: "name may only contain letters, digits, '.', '-' and '_', and may not end in .git"})
	}
}

// checkBranchName adds the field error of a default branch that is too long
// or not a valid branch name (gitref.ValidBranch).
func checkBranchName(fields *apierr.Fields, branch string) {
	if fields.MaxLength(resource, "default_branch", branch, MaxDefaultBranchLength) && !gitref.ValidBranch(branch) {
		fields.Add(resource, "default_branch", apierr.CodeInvalid)
	}
}

// Insert adds the repository row. A name the owner already has (in any
// case) is a 422 already_exists.
func Insert(ctx context.Context, q store.Q, n NewRepository) (*Repository, error) {
	if err := n.Validate(); err != nil {
		return nil, err
	}
	now := store.Now()
	var forkOf, templateOf *int64
	if n.ForkOfID != 0 {
		forkOf = &n.ForkOfID
	}
	if n.TemplateID != 0 {
		templateOf = &n.TemplateID
	}
	settings := "{}"
	if !n.Settings.empty() {
		settings = n.Settings.apply(DefaultSettings()).encode()
	}
	var id int64
	err := q.QueryRowContext(ctx, `
		INSERT INTO repositories (owner_id, name, description, private, default_branch, advanced_security, fork_of_id, pushed_at, created_at, updated_at,
			settings, is_template, template_id)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11, $12) RETURNING id`,
		n.Owner.ID, n.Name, n.Description, n.Private, n.DefaultBranch, n.AdvancedSecurity, forkOf, n.PushedAt, now,
		settings, n.IsTemplate, templateOf).Scan(&id)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return nil, apierr.Validation(apierr.FieldError{Resource: "Repository", Field: "name", Code: apierr.CodeAlreadyExists,
			Message: "name already exists on this account"})
	} else if err != nil {
		return nil, err
	}
	if err := dropRedirect(ctx, q, n.Owner.ID, n.Name); err != nil {
		return nil, err
	}
	return ByID(ctx, q, id)
}

// Renamed returns the repository that was called OWNER/NAME (both
// case-insensitive) before a rename or transfer, while no repository has
// taken that name, or, when OWNER is the old login of a renamed account
// that no account has taken, the repository NAME of that account:
// ErrNotFound otherwise.
func Renamed(ctx context.Context, q store.Q, owner, name string) (*Repository, error) {
	r, err := scanRepo(q.QueryRowContext(ctx, `SELECT `+repoColumns+repoFrom+`
		JOIN repo_redirects d ON d.repository_id = r.id
		JOIN accounts oa ON oa.id = d.owner_id
		WHERE lower(oa.login) = lower($1) AND d.name_lower = lower($2)`, owner, name))
	if !errors.Is(err, store.ErrNotFound) {
		return r, err
	}
	return scanRepo(q.QueryRowContext(ctx, `SELECT `+repoColumns+repoFrom+`
		JOIN account_redirects ar ON ar.account_id = r.owner_id
		WHERE ar.login_lower = lower($1) AND lower(r.name) = lower($2)
		AND NOT EXISTS (SELECT 1 FROM accounts x WHERE lower(x.login) = lower($1))`, owner, name))
}

// addRedirect makes the old name of a renamed repository lead to it.
func addRedirect(ctx context.Context, q store.Q, r *Repository, now time.Time) error {
	_, err := q.ExecContext(ctx, `
		INSERT INTO repo_redirects (owner_id, name_lower, repository_id, created_at) VALUES ($1, lower($2), $3, $4)
		ON CONFLICT (owner_id, name_lower) DO UPDATE SET repository_id = excluded.repository_id, created_at = excluded.created_at`,
		r.Owner.ID, r.Name, r.ID, now)
	return store.Normalize(err)
}

// dropRedirect forgets an old name that a repository has taken.
func dropRedirect(ctx context.Context, q store.Q, ownerID int64, name string) error {
	_, err := q.ExecContext(ctx, `DELETE FROM repo_redirects WHERE owner_id = $1 AND name_lower = lower($2)`, ownerID, name)
	return store.Normalize(err)
}

// SetMigrationLock locks or unlocks the repository for a migration.
func SetMigrationLock(ctx context.Context, q store.Q, id int64, locked bool) error {
	_, err := q.ExecContext(ctx, `UPDATE repositories SET migration_locked = $1, updated_at = $2 WHERE id = $3`, locked, store.Now(), id)
	return store.Normalize(err)
}

// ErrLocked is the refusal of a write to a repository that is locked for
// migration.
func ErrLocked() *apierr.Error {
	return apierr.Forbidden("Repository is locked for migration; it accepts reads only until it is unlocked.")
}

// ErrArchived is the refusal of a write to an archived repository, the
// platform's 403.
func ErrArchived() error {
	return apierr.Forbidden("Repository was archived so is read-only.")
}

// CheckNotLocked returns ErrLocked when the repository is locked for
// migration. Git pushes and API writes call it.
func CheckNotLocked(r *Repository) error {
	if r.MigrationLocked {
		return ErrLocked()
	}
	return nil
}

// Changes are the fields an update sets; a nil field stays as it is.
type Changes struct {
	Name          *string
	Description   *string
	Private       *bool
	DefaultBranch *string
	// Owner, when set, transfers the repository to another account.
	Owner      *accounts.Account
	Settings   *SettingsChanges
	IsTemplate *bool
	// Archived archives (true) or unarchives the repository.
	Archived *bool
}

// Validate checks the fields a client sends.
func (c Changes) Validate() error {
	var fields apierr.Fields
	if c.Name != nil {
		checkName(&fields, *c.Name)
	}
	if c.Description != nil {
		fields.MaxLength(resource, "description", *c.Description, MaxDescriptionLength)
	}
	if c.DefaultBranch != nil {
		checkBranchName(&fields, *c.DefaultBranch)
	}
	if c.Settings != nil {
		c.Settings.validate(&fields)
	}
	return fields.Err()
}

// keepsPlace reports whether the changes keep r's owner and name (a
// description, visibility or default branch change): no redirect, no
// name conflict, no token to forget.
func (c Changes) keepsPlace(r *Repository) bool {
	return (c.Name == nil || *c.Name == r.Name) && (c.Owner == nil || c.Owner.ID == r.Owner.ID)
}

// with is r with the changes that keep its place applied and updated at
// now: the repository as the row reads once Update wrote them.
func (r *Repository) with(c Changes, now time.Time) *Repository {
	after := *r
	if c.Description != nil {
		after.Description = *c.Description
	}
	if c.Private != nil {
		after.Private = *c.Private
	}
	if c.DefaultBranch != nil {
		after.DefaultBranch = *c.DefaultBranch
	}
	after.Settings = c.Settings.apply(r.Settings)
	if c.Archived != nil {
		after.Archived = *c.Archived
	}
	if c.IsTemplate != nil {
		after.IsTemplate = *c.IsTemplate
	}
	after.UpdatedAt = now
	return &after
}

// Update applies the changes to the repository row. A name the owner
// (the new one, for a transfer) already has is a 422 already_exists. The
// old owner and name of a renamed or transferred repository lead to it
// (Renamed) until a repository takes them.
func Update(ctx context.Context, q store.Q, r *Repository, c Changes, now time.Time) error {
	if err := c.Validate(); err != nil {
		return err
	}
	ownerID, name, description, private, branch := r.Owner.ID, r.Name, r.Description, r.Private, r.DefaultBranch
	if c.Owner != nil {
		ownerID = c.Owner.ID
	}
	if c.Name != nil {
		name = *c.Name
	}
	if c.Description != nil {
		description = *c.Description
	}
	if c.Private != nil {
		private = *c.Private
	}
	if c.DefaultBranch != nil {
		branch = *c.DefaultBranch
	}
	isTemplate, archived := r.IsTemplate, r.Archived
	if c.IsTemplate != nil {
		isTemplate = *c.IsTemplate
	}
	if c.Archived != nil {
		archived = *c.Archived
	}
	_, err := q.ExecContext(ctx, `
		UPDATE repositories SET owner_id = $1, name = $2, description = $3, private = $4, default_branch = $5, updated_at = $6,
			settings = $8, is_template = $9, archived = $10
		WHERE id = $7`, ownerID, name, description, private, branch, now, r.ID, c.Settings.apply(r.Settings).encode(), isTemplate, archived)
	if err = store.Normalize(err); errors.Is(err, store.ErrConflict) {
		return apierr.Validation(apierr.FieldError{Resource: "Repository", Field: "name", Code: apierr.CodeAlreadyExists,
			Message: "name already exists on this account"})
	}
	if err != nil || ownerID == r.Owner.ID && strings.EqualFold(name, r.Name) {
		return err
	}
	if err := dropRedirect(ctx, q, ownerID, name); err != nil {
		return err
	}
	return addRedirect(ctx, q, r, now)
}
