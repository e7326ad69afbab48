package accounts

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// Handler serves the accounts endpoints.
type Handler struct {
	DB *store.DB
	// Details, when set, serves the details of an account (its counters
	// and profile, which GET /user, /users/{username} and /orgs/{org}
	// show) from its cache (NewDetailsCache); nil reads them from DB.
	Details *DetailsCache
	// OrgUpdated, when set, runs in the transaction of PATCH /orgs/{org}
	// with the organization before and after the change (the audit log
	// records the settings changed).
	OrgUpdated func(ctx context.Context, tx *store.Tx, before, after *Account) error
}

// DetailsCache keeps accounts' counters and profiles in a store.ReadCache
// over the tables they are read from (detailTables).
type DetailsCache struct {
	c *store.ReadCache[int64, accountDetails]
}

// NewDetailsCache returns a DetailsCache of db keeping details for at most
// ttl (0: store.DefaultReadCacheTTL). Make it when the server starts:
// on PostgreSQL a server notifies the others of writes to the tables it
// watches (store.DB.Watch).
func NewDetailsCache(db *store.DB, ttl time.Duration) *DetailsCache {
	return &DetailsCache{c: store.NewReadCache[int64, accountDetails](db, ttl, detailTables...)}
}

func (h *Handler) getAuthenticatedUser(w http.ResponseWriter, r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	a, d, err := h.withDetails(r.Context(), p.Account.ID)
	if err != nil {
		return err
	}
	u := toUser(r.Context(), a, d)
	u.UserViewType = "private"
	httpapi.WriteJSON(w, http.StatusOK, PrivateUser{User: u, TotalPrivateRepos: d.counts.privateRepos, PrivateGists: d.counts.privateGists,
		OwnedPrivateRepos: d.counts.privateRepos, TwoFactorAuthentication: a.HasTOTP})
	return nil
}

func (h *Handler) getUser(w http.ResponseWriter, r *http.Request) error {
	u, err := h.toUser(r.Context(), UserFrom(r.Context()))
	if err != nil {
		return err
	}
	httpapi.SetLastModified(w, u.UpdatedAt.Time)
	httpapi.WriteJSON(w, http.StatusOK, u)
	return nil
}

func (h *Handler) getOrg(w http.ResponseWriter, r *http.Request) error {
	org := OrgFrom(r.Context())
	httpapi.SetLastModified(w, org.UpdatedAt)
	return h.writeOrg(w, r, org)
}

// writeOrg answers the organization as organization-full, with the
// owners' fields to its owners.
func (h *Handler) writeOrg(w http.ResponseWriter, r *http.Request, a *Account) error {
	_, d, err := h.withDetails(r.Context(), a.ID)
	if err != nil {
		return err
	}
	c, prof := d.counts, d.profile
	base := httpapi.BaseURL(r.Context())
	so := ToSimpleOrg(base, a)
	out := Organization{
		Login: so.Login, ID: so.ID, NodeID: so.NodeID, URL: so.URL, ReposURL: so.ReposURL, EventsURL: so.EventsURL,
		HooksURL: so.HooksURL, IssuesURL: so.IssuesURL, MembersURL: so.MembersURL, PublicMembersURL: so.PublicMembersURL,
		AvatarURL: so.AvatarURL, Description: so.Description, Name: optional(a.Name), Email: optional(a.Email),
		Company: optional(prof.Company), Blog: prof.Blog, Location: optional(prof.Location), TwitterUsername: optional(prof.TwitterUsername),
		HasOrganizationProjects: true, HasRepositoryProjects: true, PublicRepos: c.publicRepos,
		Followers: c.followers, Following: c.following, HTMLURL: HTMLURL(base, a),
		CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt), Type: a.Type,
	}
	if auth.RoleFrom(r.Context()) >= auth.RoleAdmin {
		usage, err := orgUsage(r.Context(), h.DB, a.ID)
		if err != nil {
			return err
		}
		out.OrgOwnerFields = ownerFields(a, c, prof, usage)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

func (h *Handler) toUser(ctx context.Context, a *Account) (User, error) {
	_, d, err := h.withDetails(ctx, a.ID)
	if err != nil {
		return User{}, err
	}
	return toUser(ctx, a, d), nil
}

// toUser is the full user object of the account with its details.
func toUser(ctx context.Context, a *Account, d details) User {
	c, prof := d.counts, d.profile
	return User{
		SimpleUser: ToSimpleUser(httpapi.BaseURL(ctx), a), UserViewType: "public",
		Name: optional(a.Name), Email: optional(a.Email),
		Company: optional(prof.Company), Blog: prof.Blog, Location: optional(prof.Location), Hireable: prof.Hireable,
		Bio: optional(prof.Bio), TwitterUsername: optional(prof.TwitterUsername),
		PublicRepos: c.publicRepos, PublicGists: c.publicGists, Followers: c.followers, Following: c.following,
		CreatedAt: wire.T(a.CreatedAt), UpdatedAt: wire.T(a.UpdatedAt),
	}
}

// details are what the full user object shows beside the account row:
// its counters and its profile.
type details struct {
	counts  counts
	profile Profile
}

// detailsColumns select the counters and the profile of the account
// aliased a, with account_profiles aliased p and account_counts aliased
// c left-joined on it (no profile: the zero Profile; no counts: zeros).
// Triggers keep account_counts as follows and repositories change
// (migration 00045): one row, however many followers.
const detailsColumns = `COALESCE(c.public_repos, 0), COALESCE(c.private_repos, 0),
	COALESCE(c.followers, 0), COALESCE(c.following, 0),
	COALESCE(p.company, ''), COALESCE(p.blog, ''), COALESCE(p.location, ''), COALESCE(p.bio, ''),
	COALESCE(p.twitter_username, ''), p.hireable, COALESCE(p.billing_email, ''),
	COALESCE(c.public_gists, 0), COALESCE(c.private_gists, 0)`

const detailsFrom = ` FROM accounts a LEFT JOIN account_profiles p ON p.account_id = a.id
	LEFT JOIN account_counts c ON c.account_id = a.id WHERE a.id = $1`

func (d *details) scanDest() []any {
	c, p := &d.counts, &d.profile
	return []any{&c.publicRepos, &c.privateRepos, &c.followers, &c.following,
		&p.Company, &p.Blog, &p.Location, &p.Bio, &p.TwitterUsername, &p.Hireable, &p.BillingEmail,
		&c.publicGists, &c.privateGists}
}

// detailTables are the tables withDetails reads.
var detailTables = []string{"accounts", "account_profiles", "repositories", "follows", store.RowsOf("gists")}

// accountDetails is what withDetails reads.
type accountDetails struct {
	account *Account
	details details
}

// withDetails is the account with its counters and profile, from the
// handler's store.ReadCache over detailTables when it holds them (a
// write through this process is seen at once). The account is the
// caller's own copy.
func (h *Handler) withDetails(ctx context.Context, id int64) (*Account, details, error) {
	if h.Details == nil {
		return withDetails(ctx, h.DB, id)
	}
	v, err := h.Details.c.Get(id, func() (accountDetails, error) {
		a, d, err := withDetails(ctx, h.DB, id)
		return accountDetails{a, d}, err
	})
	if err != nil {
		return nil, details{}, err
	}
	copied, d := *v.account, v.details
	if d.profile.Hireable != nil {
		hireable := *d.profile.Hireable
		d.profile.Hireable = &hireable
	}
	return &copied, d, nil
}

// withDetails reads the account with its counters and profile in one
// query: GET /user's single round trip.
func withDetails(ctx context.Context, q store.Q, id int64) (*Account, details, error) {
	var a Account
	var d details
	err := store.Normalize(q.QueryRowContext(ctx, `SELECT `+prefixedAccountColumns+`, `+detailsColumns+detailsFrom, id).
		Scan(append(a.ScanDest(), d.scanDest()...)...))
	if err != nil {
		return nil, details{}, err
	}
	return &a, d, nil
}

type counts struct {
	publicRepos, privateRepos, followers, following int
	publicGists, privateGists                       int
}

// listUsers answers GET /users: every account (users, organizations and
// bots) in the order of their ids, from the id after since, with a Link
// to the next page.
func (h *Handler) listUsers(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	since, err := httpapi.ParseSince(r)
	if err != nil {
		return err
	}
	list, err := Since(r.Context(), h.DB, since, page.PerPage)
	if err != nil {
		return err
	}
	base := httpapi.BaseURL(r.Context())
	out := make([]SimpleUser, 0, len(list))
	for _, a := range list {
		out = append(out, ToSimpleUser(base, a))
	}
	if len(list) > 0 {
		httpapi.SetNextSince(w, r, page, len(list), list[len(list)-1].ID)
	}
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// getUserByID answers GET /user/{account_id}: the account with the id,
// as GET /users/{username} answers it.
func (h *Handler) getUserByID(w http.ResponseWriter, r *http.Request) error {
	id, err := strconv.ParseInt(r.PathValue("account_id"), 10, 64)
	if err != nil || id <= 0 {
		return apierr.NotFound()
	}
	a, err := ByID(r.Context(), h.DB, id)
	if err != nil {
		return err
	}
	u, err := h.toUser(r.Context(), a)
	if err != nil {
		return err
	}
	httpapi.SetLastModified(w, u.UpdatedAt.Time)
	httpapi.WriteJSON(w, http.StatusOK, u)
	return nil
}

// ownerFields are the organization's fields that only its owners see.
func ownerFields(a *Account, c counts, prof Profile, usage OrgOwnerUsage) *OrgOwnerFields {
	can := a.MembersCanCreateRepos
	creation := "none"
	if can {
		creation = "all"
	}
	return &OrgOwnerFields{TotalPrivateRepos: c.privateRepos, OwnedPrivateRepos: c.privateRepos,
		BillingEmail: optional(prof.BillingEmail), DefaultRepositoryPermission: a.BaseRepoPermission,
		MembersCanCreateRepositories: can, OrgOwnerUsage: usage, MembersAllowedRepositoryCreationType: creation,
		MembersCanCreatePublicRepositories: can, MembersCanCreatePrivateRepositories: can,
		MembersCanCreateInternalRepositories: can, MembersCanCreatePages: true, MembersCanCreatePublicPages: true,
		MembersCanCreatePrivatePages: true}
}

// The plan forgeapi shows: no limits, in the platform's figures.
const (
	unlimitedSpace        = 976562499
	unlimitedPrivateRepos = 999999
)

// orgUsage reads the organization's usage in one query: its members
// (the plan's seats), the size of its repositories' git data in KB as
// last measured, and the users granted one of its repositories directly
// who are not members (outside collaborators).
func orgUsage(ctx context.Context, q store.Q, orgID int64) (OrgOwnerUsage, error) {
	u := OrgOwnerUsage{Plan: OrgPlan{Name: "enterprise", Space: unlimitedSpace, PrivateRepos: unlimitedPrivateRepos}}
	err := q.QueryRowContext(ctx, `SELECT
		(SELECT count(*) FROM org_members WHERE org_id = $1),
		(SELECT COALESCE(sum(c.size_kb), 0) FROM repositories r JOIN repository_counts c ON c.repository_id = r.id WHERE r.owner_id = $1),
		(SELECT count(DISTINCT rc.user_id) FROM repo_collaborators rc JOIN repositories r ON r.id = rc.repository_id
			WHERE r.owner_id = $1 AND rc.user_id NOT IN (SELECT user_id FROM org_members WHERE org_id = $1))`, orgID).
		Scan(&u.Plan.FilledSeats, &u.DiskUsage, &u.Collaborators)
	u.Plan.Seats = u.Plan.FilledSeats
	return u, store.Normalize(err)
}
