// Package accounts holds users, organizations, bots, enterprises and
// OAuth applications: the platform beneath the spec's API. It owns their
// SQL, their JSON shapes (simple-user, user, organization) and the
// GET /user, /users/{username} and /orgs/{org} endpoints.
package accounts

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/secretbox"

	"forgeapi/internal/apierr"
	"forgeapi/internal/store"
)

// The account types, as the platform's `type` field names them.
const (
	TypeUser = "User"
	TypeOrg  = "Organization"
	TypeBot  = "Bot"
)

// Organization member roles.
const (
	RoleOwner  = "owner"
	RoleMember = "member"
)

// Account is a user, an organization or a bot.
type Account struct {
	ID           int64
	Type         string
	Login        string
	Name         string
	Email        string
	Description  string
	SiteAdmin    bool
	SAMLEnforced bool
	HasTOTP      bool
	// BaseRepoPermission is, for an organization, the role every member
	// has on its repositories: BaseNone, BaseRead (the default),
	// BaseWrite or BaseAdmin.
	BaseRepoPermission string
	// MembersCanCreateRepos is, for an organization, whether members who
	// are not owners may create repositories in it.
	MembersCanCreateRepos bool
	CreatedAt             time.Time
	UpdatedAt             time.Time
	// SuspendedAt is when a site administrator suspended the user (nil:
	// not suspended). A suspended user authenticates with nothing.
	SuspendedAt *time.Time
}

// The values of Account.BaseRepoPermission, the platform's
// default_repository_permission.
const (
	BaseNone  = "none"
	BaseRead  = "read"
	BaseWrite = "write"
	BaseAdmin = "admin"
)

// IsOrg reports whether the account is an organization.
func (a *Account) IsOrg() bool { return a.Type == TypeOrg }

var loginPattern = regexp.MustCompile(`^[A-Za-z0-9](?:[A-Za-z0-9]|-[A-Za-z0-9]){0,38}$`)

// ValidLogin reports whether s follows the platform's login rules:
// 1 to 39 letters, digits or single inner hyphens.
func ValidLogin(s string) bool { return loginPattern.MatchString(s) }

const accountColumns = `id, type, login, name, email, description, site_admin, saml_enforced, totp_secret <> '',
	base_repo_permission, members_can_create_repos, created_at, updated_at, suspended_at`

// JoinedColumns are the columns ScanDest scans, of the accounts table
// aliased a, for queries that join it (repositories with their owner).
const JoinedColumns = `a.id, a.type, a.login, a.name, a.email, a.description, a.site_admin, a.saml_enforced,
	a.totp_secret <> '', a.base_repo_permission, a.members_can_create_repos, a.created_at, a.updated_at,
	a.suspended_at`

// prefixedAccountColumns is JoinedColumns, for this package's joins.
const prefixedAccountColumns = JoinedColumns

// ScanDest returns the scan destinations of JoinedColumns (and
// accountColumns) in a.
func (a *Account) ScanDest() []any {
	return []any{&a.ID, &a.Type, &a.Login, &a.Name, &a.Email, &a.Description, &a.SiteAdmin, &a.SAMLEnforced, &a.HasTOTP,
		&a.BaseRepoPermission, &a.MembersCanCreateRepos, &a.CreatedAt, &a.UpdatedAt, &a.SuspendedAt}
}

func scanAccount(row interface{ Scan(...any) error }) (*Account, error) {
	var a Account
	if err := row.Scan(a.ScanDest()...); err != nil {
		return nil, store.Normalize(err)
	}
	return &a, nil
}

// ByLogin returns the account with the login (case-insensitive), or
// store.ErrNotFound.
func ByLogin(ctx context.Context, q store.Q, login string) (*Account, error) {
	return scanAccount(q.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE lower(login) = lower($1)`, login))
}

// ByID returns the account with the id, or store.ErrNotFound.
func ByID(ctx context.Context, q store.Q, id int64) (*Account, error) {
	return scanAccount(q.QueryRowContext(ctx, `SELECT `+accountColumns+` FROM accounts WHERE id = $1`, id))
}

// UserByLogin returns the user (not organization) with the login.
func UserByLogin(ctx context.Context, q store.Q, login string) (*Account, error) {
	a, err := ByLogin(ctx, q, login)
	if err == nil && a.Type != TypeUser {
		return nil, store.ErrNotFound
	}
	return a, err
}

// OrgByLogin returns the organization with the login.
func OrgByLogin(ctx context.Context, q store.Q, login string) (*Account, error) {
	a, err := ByLogin(ctx, q, login)
	if err == nil && a.Type != TypeOrg {
		return nil, store.ErrNotFound
	}
	return a, err
}

// NewAccount is what Create needs.
type NewAccount struct {
	Type         string
	Login        string
	Name         string
	Email        string
	PasswordHash string
	// SealedTOTPSecret is the TOTP seed sealed by auth.SealTOTPSecret
	// ("" for none); Create refuses a plain one.
	SealedTOTPSecret string
	SiteAdmin        bool
}

// Create inserts an account (for a user created with an email address,
// that address becomes the primary one). A login that breaks the rules is a 422
// `invalid`; one that is taken (by any account type) is a 422
// `already_exists`.
func Create(ctx context.Context, q store.Q, n NewAccount) (*Account, error) {
	if !ValidLogin(n.Login) && n.Type != TypeBot {
		return nil, apierr.Invalid(n.Type, "login", apierr.CodeInvalid)
	}
	if n.SealedTOTPSecret != "" && !secretbox.IsSealed(n.SealedTOTPSecret) {
		return nil, errors.New("accounts: the TOTP secret must be sealed")
	}
	now := store.Now()
	row := q.QueryRowContext(ctx, `
		INSERT INTO accounts (type, login, name, email, password_hash, totp_secret, site_admin, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $8)
		RETURNING `+accountColumns,
		n.Type, n.Login, n.Name, n.Email, n.PasswordHash, n.SealedTOTPSecret, n.SiteAdmin, now)
	a, err := scanAccount(row)
	if errors.Is(err, store.ErrConflict) {
		return nil, apierr.Validation(apierr.FieldError{Resource: n.Type, Field: "login", Code: apierr.CodeAlreadyExists,
			Message: "login " + n.Login + " is already taken"})
	}
	if err == nil && n.Type == TypeUser && n.Email != "" {
		// The address becomes the user's primary one, unless another
		// account has it already.
		_, err = q.ExecContext(ctx, `INSERT INTO user_emails (user_id, email, is_primary, visibility, created_at)
			VALUES ($1, $2, TRUE, $3, $4) ON CONFLICT DO NOTHING`, a.ID, n.Email, EmailPublic, now)
	}
	return a, store.Normalize(err)
}

// MemberRole returns the user's role in the organization: RoleOwner,
// RoleMember, or "" when not a member.
func MemberRole(ctx context.Context, q store.Q, orgID, userID int64) (string, error) {
	var role string
	err := q.QueryRowContext(ctx, `SELECT role FROM org_members WHERE org_id = $1 AND user_id = $2`, orgID, userID).Scan(&role)
	if err = store.Normalize(err); errors.Is(err, store.ErrNotFound) {
		return "", nil
	}
	return role, err
}

// SetMember adds the user to the organization with the role, or changes
// the role of a member.
func SetMember(ctx context.Context, q store.Q, orgID, userID int64, role string) error {
	if role != RoleOwner && role != RoleMember {
		return apierr.Invalid("Membership", "role", apierr.CodeInvalid)
	}
	_, err := q.ExecContext(ctx, `
		INSERT INTO org_members (org_id, user_id, role, created_at) VALUES ($1, $2, $3, $4)
		ON CONFLICT (org_id, user_id) DO UPDATE SET role = excluded.role`, orgID, userID, role, store.Now())
	return store.Normalize(err)
}

// OrgsOf returns the ids of the organizations the user belongs to.
func OrgsOf(ctx context.Context, q store.Q, userID int64) ([]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT org_id FROM org_members WHERE user_id = $1 ORDER BY org_id`, userID)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var ids []int64
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return nil, err
		}
		ids = append(ids, id)
	}
	return ids, rows.Err()
}

// Cache looks accounts up by login through a store.ReadCache over the
// accounts table, for the lookups every request of a /users/{username}
// or /orgs/{org} route makes: a change to an account takes effect at
// once (see store.ReadCache).
type Cache struct {
	db      *store.DB
	ttl     time.Duration
	byLogin *store.ReadCache[string, *Account]
	byID    *store.ReadCache[int64, *Account]
}

// NewCache returns an account cache over db keeping lookups for at most
// ttl (0: store.DefaultReadCacheTTL).
func NewCache(db *store.DB, ttl time.Duration) *Cache {
	return &Cache{db: db, ttl: ttl, byLogin: store.NewReadCache[string, *Account](db, ttl, "accounts"),
		byID: store.NewReadCache[int64, *Account](db, ttl, "accounts")}
}

// TTL is the bound given to NewCache (0: store.DefaultReadCacheTTL), for
// the caches kept beside this one with the same lifetime.
func (c *Cache) TTL() time.Duration { return c.ttl }

// ByLogin is ByLogin through the cache. The account returned is the
// caller's own copy.
func (c *Cache) ByLogin(ctx context.Context, login string) (*Account, error) {
	a, err := c.byLogin.Get(asciiLower(login), func() (*Account, error) { return ByLogin(ctx, c.db, login) })
	if err != nil {
		return nil, err
	}
	copied := *a
	return &copied, nil
}

// ByID is ByID through the cache, for the acting account of a write (the
// actor its events name). The account returned is the caller's own copy.
// A nil Cache reads the database.
func (c *Cache) ByID(ctx context.Context, q store.Q, id int64) (*Account, error) {
	if c == nil {
		return ByID(ctx, q, id)
	}
	a, err := c.byID.Get(id, func() (*Account, error) { return ByID(ctx, c.db, id) })
	if err != nil {
		return nil, err
	}
	copied := *a
	return &copied, nil
}

// asciiLower lowers ASCII letters only, as SQLite's lower() does: the
// cache key of a login lookup never joins two logins the database tells
// apart.
func asciiLower(s string) string {
	for i := 0; i < len(s); i++ {
		if c := s[i]; 'A' <= c && c <= 'Z' {
			b := []byte(s)
			for j := i; j < len(b); j++ {
				if 'A' <= b[j] && b[j] <= 'Z' {
					b[j] += 'a' - 'A'
				}
			}
			return string(b)
		}
	}
	return s
}

// SetPassword replaces the account's password hash ("" turns password
// authentication off).
func SetPassword(ctx context.Context, q store.Q, id int64, hash string) error {
	_, err := q.ExecContext(ctx, `UPDATE accounts SET password_hash = $1, updated_at = $2 WHERE id = $3`, hash, store.Now(), id)
	return store.Normalize(err)
}

// SetTOTPSecret turns two-factor authentication on with a seed sealed by
// auth.SealTOTPSecret, or off with "". Like Create, it refuses a plain
// seed.
func SetTOTPSecret(ctx context.Context, q store.Q, id int64, sealed string) error {
	if sealed != "" && !secretbox.IsSealed(sealed) {
		return errors.New("accounts: the TOTP secret must be sealed")
	}
	_, err := q.ExecContext(ctx, `UPDATE accounts SET totp_secret = $1, totp_last_step = 0, updated_at = $2 WHERE id = $3`,
		sealed, store.Now(), id)
	return store.Normalize(err)
}

// Delete deletes the account; its memberships, tokens, stars, follows,
// OAuth applications and owned repositories go with it (foreign keys).
// Events it took part in stay in the feeds' history.
func Delete(ctx context.Context, q store.Q, id int64) error {
	_, err := q.ExecContext(ctx, `DELETE FROM accounts WHERE id = $1`, id)
	return store.Normalize(err)
}

// RemoveMember takes the user out of the organization; store.ErrNotFound
// when the user is not a member.
func RemoveMember(ctx context.Context, q store.Q, orgID, userID int64) error {
	res, err := q.ExecContext(ctx, `DELETE FROM org_members WHERE org_id = $1 AND user_id = $2`, orgID, userID)
	if err != nil {
		return store.Normalize(err)
	}
	if n, _ := res.RowsAffected(); n == 0 {
		return store.ErrNotFound
	}
	return nil
}

// Lock locks the account's row for the rest of tx (on PostgreSQL; SQLite's
// write transactions never overlap): the changes to an organization that
// check the rest of it first (its last owner, its teams' nesting) run one
// after another per organization, each checking what the ones before it
// committed.
func Lock(ctx context.Context, tx *store.Tx, id int64) error {
	var got int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM accounts WHERE id = $1`+tx.ForUpdate(), id).Scan(&got)
	return store.Normalize(err)
}

// LockedOwnerCount locks the organization's account row for the rest of
// tx, then counts its owners: the changes that could take an
// organization's last owner away run one after another, each counting
// what the ones before it committed (two owners removing each other at
// once would otherwise each count two and leave none).
func LockedOwnerCount(ctx context.Context, tx *store.Tx, orgID int64) (int, error) {
	if err := Lock(ctx, tx, orgID); err != nil {
		return 0, err
	}
	var n int
	err := tx.QueryRowContext(ctx, `SELECT count(*) FROM org_members WHERE org_id = $1 AND role = $2`, orgID, RoleOwner).Scan(&n)
	return n, store.Normalize(err)
}

// LockedSoleOwnerOf is SoleOwnerOf in tx with the account rows of the
// organizations the user owns locked first (in id order), as
// LockedOwnerCount locks one: a deletion of the user that checks it
// cannot pass beside another owner leaving one of those organizations.
func LockedSoleOwnerOf(ctx context.Context, tx *store.Tx, userID int64) ([]string, error) {
	rows, err := tx.QueryContext(ctx, `SELECT id FROM accounts WHERE id IN (SELECT org_id FROM org_members
		WHERE user_id = $1 AND role = $2) ORDER BY id`+tx.ForUpdate(), userID, RoleOwner)
	if _, err := store.ScanAll(rows, err, store.ScanID); err != nil {
		return nil, err
	}
	return SoleOwnerOf(ctx, tx, userID)
}

// SoleOwnerOf returns the logins of the organizations whose only owner
// is the user.
func SoleOwnerOf(ctx context.Context, q store.Q, userID int64) ([]string, error) {
	rows, err := q.QueryContext(ctx, `
		SELECT o.login FROM org_members m JOIN accounts o ON o.id = m.org_id
		WHERE m.user_id = $1 AND m.role = $2
		  AND NOT EXISTS (SELECT 1 FROM org_members x WHERE x.org_id = m.org_id AND x.role = $2 AND x.user_id <> $1)
		ORDER BY o.login`, userID, RoleOwner)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var logins []string
	for rows.Next() {
		var l string
		if err := rows.Scan(&l); err != nil {
			return nil, store.Normalize(err)
		}
		logins = append(logins, l)
	}
	return logins, store.Normalize(rows.Err())
}

// ByLogins returns the accounts of the logins that exist, by lower-case
// login, in one query.
func ByLogins(ctx context.Context, q store.Q, logins []string) (map[string]*Account, error) {
	out := map[string]*Account{}
	if len(logins) == 0 {
		return out, nil
	}
	args := make([]any, len(logins))
	params := make([]string, len(logins))
	for i, login := range logins {
		args[i], params[i] = strings.ToLower(login), "$"+strconv.Itoa(i+1)
	}
	list, err := queryAccounts(ctx, q, store.Dynamic+`SELECT `+accountColumns+` FROM accounts WHERE lower(login) IN (`+strings.Join(params, ", ")+`)`, args...)
	for _, a := range list {
		out[strings.ToLower(a.Login)] = a
	}
	return out, err
}

// ByIDs returns the accounts of the ids that exist, by id, in one query.
func ByIDs(ctx context.Context, q store.Q, ids []int64) (map[int64]*Account, error) {
	out := map[int64]*Account{}
	if len(ids) == 0 {
		return out, nil
	}
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	list, err := queryAccounts(ctx, q, store.Dynamic+`SELECT `+accountColumns+` FROM accounts WHERE id IN `+store.In(1, len(ids)), args...)
	for _, a := range list {
		out[a.ID] = a
	}
	return out, err
}

// Since returns up to limit accounts (users, organizations and bots) with
// ids above since, in the order of their ids: GET /users's page.
func Since(ctx context.Context, q store.Q, since int64, limit int) ([]*Account, error) {
	return queryAccounts(ctx, q, `SELECT `+accountColumns+` FROM accounts WHERE id > $1 ORDER BY id LIMIT $2`, since, limit)
}
