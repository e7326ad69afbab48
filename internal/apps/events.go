package apps

import (
	"context"
	"encoding/json"
	"slices"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// EventPermissions is, for each webhook event forgeapi emits, the
// permission an app needs (read is enough) to receive it, as the
// platform's webhook events reference states. An app receives no other
// event but installation and installation_repositories, which every app
// receives about its own installations.
var EventPermissions = map[string]string{
	"create":              "contents",
	"delete":              "contents",
	"fork":                "contents",
	"push":                "contents",
	"repository_dispatch": "contents",
	"commit_comment":      "contents",
	"member":              "metadata",
	"public":              "metadata",
	"repository":          "metadata",
	"star":                "metadata",
	"watch":               "metadata",
	"status":              "statuses",
	"check_run":           "checks",
	"check_suite":         "checks",
	"issues":              "issues",
	"issue_comment":       "issues",
	"milestone":           "issues",
	"label":               "metadata",
	"organization":        "members",
	"org_block":           "organization_administration",

	// Deployments (internal/deployments).
	"deployment":        "deployments",
	"deployment_status": "deployments",

	// Releases (internal/releases).
	"release": "contents",
}

// Receives reports whether the app's webhook receives the event: it
// subscribes to it and holds the permission it needs.
func (a *App) Receives(event string) bool {
	perm, ok := EventPermissions[event]
	return ok && slices.Contains(a.Events, event) && a.Permissions.Has(auth.Need{Name: perm, Level: auth.Read})
}

// Recipients implements webhooks.AppResolver: the installations, not
// suspended, on the account where e happened (its repository's owner, or
// its organization) of the apps that receive e, and, for a repository's
// event, whose selection reaches the repository. The installations of
// an account come from a cache (see receivingOn).
func (s *Service) Recipients(ctx context.Context, q store.Q, e *events.Event) ([]events.AppInstallation, error) {
	account := e.Org
	if e.Repo != nil {
		account = e.Repo.Owner
	}
	if account == nil {
		return nil, nil
	}
	all, err := s.receivingOn(ctx, q, account.ID)
	if err != nil {
		return nil, err
	}
	var out []events.AppInstallation
	for _, r := range all {
		if r.app.Receives(e.HookEvent) && (e.Repo == nil || r.inst.Selects(e.Repo)) {
			out = append(out, events.AppInstallation{AppID: r.inst.AppID, InstallationID: r.inst.ID})
		}
	}
	return out, nil
}

// receiving is an installation, not suspended, with the events its app
// subscribes to and the permissions it holds.
type receiving struct {
	inst Installation
	app  App
}

// installationTables are the tables receivingOn's values are read from:
// installations and apps, and the rows of accounts, whose deletes
// cascade into installations (and whose ids SQLite may give again).
var installationTables = []string{"app_installations", "apps", store.RowsOf("accounts")}

// receivingOn returns the installations, not suspended, on the account:
// the events sink asks for every event, inside the API's write
// transaction, and almost always finds none. It reads through a cache
// (a store.ReadCache dropped by every committed write to the tables
// above) when the Service has one. A transaction that writes
// installations or apps must not emit events to Recipients after that
// write (none does: the apps package emits its own events to one
// installation, with ToApp): the cache would not show the write. The
// values are shared: callers must not change them.
func (s *Service) receivingOn(ctx context.Context, q store.Q, accountID int64) ([]receiving, error) {
	if s.installations == nil {
		return loadReceiving(ctx, q, accountID)
	}
	return s.installations.Get(accountID, func() ([]receiving, error) { return loadReceiving(ctx, q, accountID) })
}

// loadReceiving reads the installations, not suspended, on the account.
func loadReceiving(ctx context.Context, q store.Q, accountID int64) ([]receiving, error) {
	rows, err := q.QueryContext(ctx, `SELECT i.id, i.app_id, i.repository_selection, i.repository_ids, a.events, a.permissions
		FROM app_installations i JOIN apps a ON a.id = i.app_id
		WHERE i.account_id = $1 AND i.suspended_at IS NULL ORDER BY i.id`, accountID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var out []receiving
	for rows.Next() {
		r := receiving{inst: Installation{AccountID: accountID}}
		var ids, evs, perms string
		if err := rows.Scan(&r.inst.ID, &r.inst.AppID, &r.inst.Selection, &ids, &evs, &perms); err != nil {
			return nil, store.Normalize(err)
		}
		if err := decodeRecipient(&r.inst, &r.app, ids, evs, perms); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, store.Normalize(rows.Err())
}

// decodeRecipient decodes the JSON columns Recipients reads.
func decodeRecipient(inst *Installation, app *App, ids, evs, perms string) error {
	if err := json.Unmarshal([]byte(ids), &inst.RepositoryIDs); err != nil {
		return err
	}
	if err := json.Unmarshal([]byte(evs), &app.Events); err != nil {
		return err
	}
	var err error
	app.Permissions, err = auth.ParseGrantJSON(perms)
	return err
}

// repositoryRef is a repository as the installation events list it.
type repositoryRef struct {
	ID       int64  `json:"id"`
	NodeID   string `json:"node_id"`
	Name     string `json:"name"`
	FullName string `json:"full_name"`
	Private  bool   `json:"private"`
}

func repositoryRefs(rs []*repos.Repository) []repositoryRef {
	out := make([]repositoryRef, 0, len(rs))
	for _, r := range rs {
		out = append(out, repositoryRef{ID: r.ID, NodeID: wire.NodeID("R", r.ID), Name: r.Name, FullName: r.FullName(), Private: r.Private})
	}
	return out
}

// emitInstallation emits, in tx, the event about the installation to
// the app's webhook alone: installation (fields: action, repositories)
// or installation_repositories, with the installation object and
// requester null; actor is the sender (nil: the installation's account).
func (s *Service) emitInstallation(ctx context.Context, tx *store.Tx, event string, app *App, inst *Installation, actor *accounts.Account, fields map[string]any) error {
	if s.Events == nil {
		return nil
	}
	j, err := renderInstallation(ctx, tx, httpapi.BaseURL(ctx), app, inst)
	if err != nil {
		return err
	}
	if actor == nil {
		if actor, err = accounts.ByID(ctx, tx, inst.AccountID); err != nil {
			return err
		}
	}
	fields["installation"] = j
	fields["requester"] = nil
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: event, HookPayload: fields, Actor: actor,
		ToApp: &events.AppInstallation{AppID: app.ID, InstallationID: inst.ID}})
}

// emitInstallationAction emits the installation event with the action
// and the repositories the installation reaches.
func (s *Service) emitInstallationAction(ctx context.Context, tx *store.Tx, action string, app *App, inst *Installation, actor *accounts.Account) error {
	rs, err := Repositories(ctx, tx, inst)
	if err != nil {
		return err
	}
	return s.emitInstallation(ctx, tx, "installation", app, inst, actor,
		map[string]any{"action": action, "repositories": repositoryRefs(rs)})
}

// emitSelectionChange emits installation_repositories for a change of
// the installation's repositories from before: added, or removed when
// only some were removed (both lists are sent either way).
func (s *Service) emitSelectionChange(ctx context.Context, tx *store.Tx, app *App, inst *Installation, before []*repos.Repository, actor *accounts.Account) error {
	after, err := Repositories(ctx, tx, inst)
	if err != nil {
		return err
	}
	added, removed := difference(after, before), difference(before, after)
	if len(added) == 0 && len(removed) == 0 {
		return nil
	}
	action := "added"
	if len(added) == 0 {
		action = "removed"
	}
	return s.emitInstallation(ctx, tx, "installation_repositories", app, inst, actor, map[string]any{
		"action": action, "repository_selection": inst.Selection,
		"repositories_added": repositoryRefs(added), "repositories_removed": repositoryRefs(removed)})
}

// difference is the repositories of a that are not in b.
func difference(a, b []*repos.Repository) []*repos.Repository {
	var out []*repos.Repository
	for _, r := range a {
		if !slices.ContainsFunc(b, func(x *repos.Repository) bool { return x.ID == r.ID }) {
			out = append(out, r)
		}
	}
	return out
}
