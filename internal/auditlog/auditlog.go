// Package auditlog is the organization audit log: Record writes an entry
// in the transaction of the administrative change it describes (hooks,
// rulesets, migrations, organization settings record directly); Sink
// records the changes that emit domain events (repositories, members,
// blocks, collaborators); Handler serves GET /orgs/{org}/audit-log with
// the platform's search phrase, include, order and cursor paging.
package auditlog

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"maps"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// Entry is one audit log entry.
type Entry struct {
	ID     int64
	OrgID  int64
	Action string // the platform's action name: repo.create, hook.create, ...
	// Actor made the change; nil records no actor.
	Actor *accounts.Account
	// ActorLogin is the actor's login as recorded.
	ActorLogin string
	Repo       string // owner/name of the repository concerned, or ""
	User       string // login of the user the change concerns, or ""
	Git        bool   // a git event rather than a web one
	Data       map[string]any
	DocumentID string
	At         time.Time
}

// Record stores the entry for the organization in q, stamped now unless
// At is set. The actor is e.Actor, else the request's authenticated user
// (auth.PrincipalFrom). Call it in the transaction of the change.
func Record(ctx context.Context, q store.Q, e Entry) error {
	if e.At.IsZero() {
		e.At = store.Now()
	}
	var actorID *int64
	if e.Actor != nil {
		actorID, e.ActorLogin = &e.Actor.ID, e.Actor.Login
	} else if p := auth.PrincipalFrom(ctx); p != nil && p.Account != nil {
		actorID, e.ActorLogin = &p.Account.ID, p.Account.Login
	}
	data, err := json.Marshal(withToken(nonNilMap(e.Data), auth.PrincipalFrom(ctx)))
	if err != nil {
		return err
	}
	_, err = q.ExecContext(ctx, `INSERT INTO audit_log (org_id, document_id, action, actor_id, actor_login, repo,
		user_login, git, data, created_ms) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
		e.OrgID, wire.NewGUID(), e.Action, actorID, e.ActorLogin, e.Repo, e.User, e.Git, string(data), e.At.UnixMilli())
	return err
}

// accessTypes are the platform's programmatic_access_type of each kind
// of token.
var accessTypes = map[auth.Kind]string{
	auth.KindClassic:      "Personal access token (classic)",
	auth.KindOAuth:        "OAuth access token",
	auth.KindFineGrained:  "Fine-grained personal access token",
	auth.KindInstallation: "GitHub App server-to-server token",
	auth.KindAppUser:      "GitHub App user-to-server token",
}

// withToken adds to an entry's data the token the change was made with,
// as the platform records it: programmatic_access_type, token_id,
// hashed_token (base64 of its SHA-256) and, for scoped tokens,
// token_scopes. Changes made without a token (a password, a git push
// over a clone token, the server itself) add nothing.
func withToken(data map[string]any, p *auth.Principal) map[string]any {
	if p == nil || p.Token == nil || accessTypes[p.Token.Kind] == "" {
		return data
	}
	t := p.Token
	data = maps.Clone(data)
	data["programmatic_access_type"] = accessTypes[t.Kind]
	data["token_id"] = t.ID
	data["hashed_token"] = base64.StdEncoding.EncodeToString(t.Sum[:])
	if t.Kind == auth.KindClassic || t.Kind == auth.KindOAuth {
		data["token_scopes"] = strings.Join(t.Scopes, ",")
	}
	return data
}

func nonNilMap(m map[string]any) map[string]any {
	if m == nil {
		return map[string]any{}
	}
	return m
}

// OrgUpdated records the organization settings a PATCH /orgs/{org}
// changed: org.update_default_repository_permission and
// org.update_member_repository_creation_permission (the
// accounts.Handler.OrgUpdated hook).
func OrgUpdated(ctx context.Context, tx *store.Tx, before, after *accounts.Account) error {
	if before.BaseRepoPermission != after.BaseRepoPermission {
		err := Record(ctx, tx, Entry{OrgID: after.ID, Action: "org.update_default_repository_permission",
			Data: map[string]any{"permission": after.BaseRepoPermission, "permission_was": before.BaseRepoPermission}})
		if err != nil {
			return err
		}
	}
	if before.MembersCanCreateRepos != after.MembersCanCreateRepos {
		return Record(ctx, tx, Entry{OrgID: after.ID, Action: "org.update_member_repository_creation_permission",
			Data: map[string]any{"members_can_create_repositories": after.MembersCanCreateRepos}})
	}
	return nil
}
