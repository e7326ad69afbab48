// Package events is the activity spine: the domain event type and the
// Bus that stores each event in the transaction of the change that caused
// it and hands it to the sinks registered at start (webhooks insert their
// deliveries there). Nothing is stored or delivered for a change whose
// transaction rolls back.
package events

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Event is one thing that happened.
type Event struct {
	// ID is set by Emit when the event is stored as a feed event.
	ID int64
	// FeedType is the feed event type (PushEvent, CreateEvent, WatchEvent,
	// DeleteEvent, PublicEvent, ...); empty for events that feeds do not
	// show (ping, meta).
	FeedType string
	// FeedPayload is the feed event's payload.
	FeedPayload any
	// HookEvent is the webhook event name (push, create, star, ...);
	// empty for events that reach no webhook.
	HookEvent string
	// HookPayload holds the webhook payload's event-specific fields
	// (action, ref, commits, ...). Sinks add repository, organization and
	// sender.
	HookPayload map[string]any
	// Actor did it; Repo and Org are where (either may be nil).
	Actor *accounts.Account
	Repo  *repos.Repository
	Org   *accounts.Account
	// Public events show in public feeds: events of public repositories.
	Public bool
	// ToApp, when set, addresses the event to that app's own webhook
	// alone (installation and installation_repositories): no repository
	// or organization hook, and no other app, receives it.
	ToApp     *AppInstallation
	CreatedAt time.Time
}

// AppInstallation names an app's installation: a recipient of an event
// on the app's webhook.
type AppInstallation struct {
	AppID          int64
	InstallationID int64
}

// Sink receives every emitted event inside its transaction. An error
// rolls the transaction back.
type Sink interface {
	HandleEvent(ctx context.Context, tx *store.Tx, e *Event) error
}

// Bus stores events and fans them out to its sinks.
type Bus struct {
	// Now is the clock that stamps events without a CreatedAt; nil means
	// store.Now.
	Now   func() time.Time
	sinks []Sink
}

// Subscribe adds a sink. Call it at start, before events are emitted.
func (b *Bus) Subscribe(s Sink) { b.sinks = append(b.sinks, s) }

// Emit stores the event (when it has a FeedType) and hands it to every
// sink, all within tx. Org defaults to the repository's owner when that
// is an organization; CreatedAt defaults to now.
func (b *Bus) Emit(ctx context.Context, tx *store.Tx, e *Event) error {
	if e.CreatedAt.IsZero() {
		e.CreatedAt = b.now()
	}
	if e.Org == nil && e.Repo != nil && e.Repo.Owner.IsOrg() {
		e.Org = e.Repo.Owner
	}
	if e.FeedType != "" {
		if err := insert(ctx, tx, e); err != nil {
			return err
		}
	}
	for _, s := range b.sinks {
		if err := s.HandleEvent(ctx, tx, e); err != nil {
			return err
		}
	}
	return nil
}

func (b *Bus) now() time.Time {
	if b.Now == nil {
		return store.Now()
	}
	return b.Now().UTC().Truncate(time.Microsecond)
}

func insert(ctx context.Context, tx store.Q, e *Event) error {
	payload, err := json.Marshal(e.FeedPayload)
	if err != nil {
		return fmt.Errorf("encode %s payload: %w", e.FeedType, err)
	}
	var repoID, orgID *int64
	var repoName, orgLogin string
	if e.Repo != nil {
		repoID, repoName = &e.Repo.ID, e.Repo.FullName()
	}
	if e.Org != nil {
		orgID, orgLogin = &e.Org.ID, e.Org.Login
	}
	err = tx.QueryRowContext(ctx, `
		INSERT INTO events (type, actor_id, actor_login, repo_id, repo_name, org_id, org_login, public, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
		e.FeedType, e.Actor.ID, e.Actor.Login, repoID, repoName, orgID, orgLogin, e.Public, string(payload), e.CreatedAt).Scan(&e.ID)
	return store.Normalize(err)
}
