package protection

import (
	"context"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apps"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/teams"
)

// enabledJSON is a setting shown as {"enabled": bool}.
type enabledJSON struct {
	Enabled bool `json:"enabled"`
}

// urlEnabledJSON is a sub-resource shown as {"url", "enabled"}.
type urlEnabledJSON struct {
	URL     string `json:"url"`
	Enabled bool   `json:"enabled"`
}

// checkJSON is one check of status-check-policy; app_id null is any app.
type checkJSON struct {
	Context string `json:"context"`
	AppID   *int64 `json:"app_id"`
}

// statusChecksJSON is the platform's status-check-policy.
type statusChecksJSON struct {
	URL         string      `json:"url"`
	Strict      bool        `json:"strict"`
	Contexts    []string    `json:"contexts"`
	ContextsURL string      `json:"contexts_url"`
	Checks      []checkJSON `json:"checks"`
}

// actorsJSON are users (simple-user), teams (team) and apps (integration).
type actorsJSON struct {
	Users []any `json:"users"`
	Teams []any `json:"teams"`
	Apps  []any `json:"apps"`
}

// restrictionsJSON is the platform's branch-restriction-policy.
type restrictionsJSON struct {
	URL      string `json:"url"`
	UsersURL string `json:"users_url"`
	TeamsURL string `json:"teams_url"`
	AppsURL  string `json:"apps_url"`
	actorsJSON
}

// dismissalJSON is the reviews' dismissal_restrictions.
type dismissalJSON struct {
	URL      string `json:"url"`
	UsersURL string `json:"users_url"`
	TeamsURL string `json:"teams_url"`
	actorsJSON
}

// reviewsJSON is the platform's protected-branch-pull-request-review.
type reviewsJSON struct {
	URL          string         `json:"url"`
	Dismissal    *dismissalJSON `json:"dismissal_restrictions,omitempty"`
	Bypass       *actorsJSON    `json:"bypass_pull_request_allowances,omitempty"`
	DismissStale bool           `json:"dismiss_stale_reviews"`
	CodeOwners   bool           `json:"require_code_owner_reviews"`
	Count        int            `json:"required_approving_review_count"`
	LastPush     bool           `json:"require_last_push_approval"`
}

// protectionJSON is the platform's branch-protection (GET) and
// protected-branch (PUT) object: disabled sections are left out.
type protectionJSON struct {
	URL                    string            `json:"url"`
	StatusChecks           *statusChecksJSON `json:"required_status_checks,omitempty"`
	Reviews                *reviewsJSON      `json:"required_pull_request_reviews,omitempty"`
	Signatures             urlEnabledJSON    `json:"required_signatures"`
	EnforceAdmins          urlEnabledJSON    `json:"enforce_admins"`
	Restrictions           *restrictionsJSON `json:"restrictions,omitempty"`
	LinearHistory          enabledJSON       `json:"required_linear_history"`
	ForcePushes            enabledJSON       `json:"allow_force_pushes"`
	Deletions              enabledJSON       `json:"allow_deletions"`
	BlockCreations         enabledJSON       `json:"block_creations"`
	ConversationResolution enabledJSON       `json:"required_conversation_resolution"`
	LockBranch             enabledJSON       `json:"lock_branch"`
	ForkSyncing            enabledJSON       `json:"allow_fork_syncing"`
}

// renderer renders one branch's protection under its URL.
type renderer struct {
	q    store.Q
	base string // API base URL
	repo *repos.Repository
	url  string // .../branches/{branch}/protection
}

func newRenderer(q store.Q, base string, repo *repos.Repository, branch string) *renderer {
	return &renderer{q: q, base: base, repo: repo, url: base + "/repos/" + repo.FullName() + "/branches/" + branch + "/protection"}
}

func (r *renderer) protection(ctx context.Context, st Settings) (*protectionJSON, error) {
	j := &protectionJSON{URL: r.url,
		Signatures:    r.flag("/required_signatures", st.Signatures),
		EnforceAdmins: r.flag("/enforce_admins", st.EnforceAdmins),
		LinearHistory: enabledJSON{st.LinearHistory}, ForcePushes: enabledJSON{st.ForcePushes},
		Deletions: enabledJSON{st.Deletions}, BlockCreations: enabledJSON{st.BlockCreations},
		ConversationResolution: enabledJSON{st.ConversationResolution}, LockBranch: enabledJSON{st.LockBranch},
		ForkSyncing: enabledJSON{st.ForkSyncing}}
	if st.StatusChecks != nil {
		j.StatusChecks = r.statusChecks(st.StatusChecks)
	}
	var err error
	if st.Reviews != nil {
		if j.Reviews, err = r.reviews(ctx, st.Reviews); err != nil {
			return nil, err
		}
	}
	if st.Restrictions != nil {
		if j.Restrictions, err = r.restrictions(ctx, st.Restrictions); err != nil {
			return nil, err
		}
	}
	return j, nil
}

func (r *renderer) flag(path string, on bool) urlEnabledJSON {
	return urlEnabledJSON{URL: r.url + path, Enabled: on}
}

func (r *renderer) statusChecks(c *StatusChecks) *statusChecksJSON {
	j := &statusChecksJSON{URL: r.url + "/required_status_checks", Strict: c.Strict, Contexts: c.Contexts(),
		ContextsURL: r.url + "/required_status_checks/contexts", Checks: []checkJSON{}}
	for _, ch := range c.Checks {
		j.Checks = append(j.Checks, checkJSON{Context: ch.Context, AppID: ch.AppID})
	}
	return j
}

func (r *renderer) reviews(ctx context.Context, rv *Reviews) (*reviewsJSON, error) {
	j := &reviewsJSON{URL: r.url + "/required_pull_request_reviews", DismissStale: rv.DismissStale,
		CodeOwners: rv.CodeOwners, Count: rv.Count, LastPush: rv.LastPush}
	if rv.Dismissal != nil {
		a, err := r.actors(ctx, rv.Dismissal)
		if err != nil {
			return nil, err
		}
		j.Dismissal = &dismissalJSON{URL: r.url + "/dismissal_restrictions", UsersURL: r.url + "/dismissal_restrictions/users",
			TeamsURL: r.url + "/dismissal_restrictions/teams", actorsJSON: *a}
	}
	if rv.Bypass != nil {
		a, err := r.actors(ctx, rv.Bypass)
		if err != nil {
			return nil, err
		}
		j.Bypass = a
	}
	return j, nil
}

func (r *renderer) restrictions(ctx context.Context, a *Actors) (*restrictionsJSON, error) {
	aj, err := r.actors(ctx, a)
	if err != nil {
		return nil, err
	}
	u := r.url + "/restrictions"
	return &restrictionsJSON{URL: u, UsersURL: u + "/users", TeamsURL: u + "/teams", AppsURL: u + "/apps", actorsJSON: *aj}, nil
}

// actors renders the actors that still exist.
func (r *renderer) actors(ctx context.Context, a *Actors) (*actorsJSON, error) {
	j := &actorsJSON{Users: []any{}, Teams: []any{}, Apps: []any{}}
	for _, id := range a.Users {
		u, err := accounts.ByID(ctx, r.q, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		j.Users = append(j.Users, accounts.ToSimpleUser(r.base, u))
	}
	for _, id := range a.Teams {
		t, err := teams.ByID(ctx, r.q, r.repo.Owner, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		tj, err := teams.JSON(ctx, r.q, r.base, t)
		if err != nil {
			return nil, err
		}
		j.Teams = append(j.Teams, tj)
	}
	for _, id := range a.Apps {
		app, err := apps.ByID(ctx, r.q, id)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, err
		}
		owner, err := accounts.ByID(ctx, r.q, app.OwnerID)
		if err != nil {
			return nil, err
		}
		j.Apps = append(j.Apps, apps.IntegrationJSON(r.base, app, owner))
	}
	return j, nil
}
