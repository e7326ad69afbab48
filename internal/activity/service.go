// Package activity holds the sources of activity that are not git:
// repository creation and visibility changes, starring, watching
// (subscriptions) and following. Each change emits its events through the
// events bus in the transaction that makes it, so a change that rolls
// back emits nothing and a committed one never loses its feed event or
// webhook deliveries.
//
// Following and watching emit no event (the platform has none in feeds
// or webhooks); they decide what reaches a user's received-events feed.
package activity

import (
	"context"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Service changes stars, subscriptions and follows and emits the events
// of repository changes.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	// Now is the clock; nil means store.Now.
	Now func() time.Time
	// AfterChange, when set, runs after a follow or a subscription
	// changes: changes that decide what feeds show without passing
	// through the events bus.
	AfterChange func()
}

func (s *Service) changed() {
	if s.AfterChange != nil {
		s.AfterChange()
	}
}

func (s *Service) now() time.Time {
	if s.Now == nil {
		return store.Now()
	}
	return s.Now().UTC().Truncate(time.Microsecond)
}

// Feed and webhook payloads of the events this package emits.
type (
	// createPayload is a CreateEvent's payload.
	createPayload struct {
		Ref          *string `json:"ref"`
		FullRef      string  `json:"full_ref"` // "" for a repository
		RefType      string  `json:"ref_type"`
		MasterBranch string  `json:"master_branch"`
		Description  *string `json:"description"`
		PusherType   string  `json:"pusher_type"`
	}
	// actionPayload is a WatchEvent's payload.
	actionPayload struct {
		Action string `json:"action"`
	}
	// emptyPayload is a PublicEvent's payload.
	emptyPayload struct{}
)

// RepositoryCreated emits CreateEvent (ref_type repository) and the
// repository webhook event with action created. It is
// repos.Service.AfterCreate.
func (s *Service) RepositoryCreated(ctx context.Context, tx *store.Tx, r *repos.Repository, actor *accounts.Account) error {
	var description *string
	if r.Description != "" {
		description = &r.Description
	}
	return s.Events.Emit(ctx, tx, &events.Event{
		FeedType: "CreateEvent",
		FeedPayload: createPayload{RefType: "repository", MasterBranch: r.DefaultBranch,
			Description: description, PusherType: "user"},
		HookEvent:   "repository",
		HookPayload: map[string]any{"action": "created"},
		Actor:       actor, Repo: r, Public: !r.Private, CreatedAt: s.now(),
	})
}

// RepositoryForked emits ForkEvent on the source repository (its payload
// the fork) and the fork webhook event to the source's hooks; it is
// repos.Service.AfterFork.
func (s *Service) RepositoryForked(ctx context.Context, tx *store.Tx, src, fork *repos.Repository, actor *accounts.Account) error {
	st, err := repos.StatsOf(ctx, tx, fork.ID)
	if err != nil {
		return err
	}
	forkee := repos.ToJSON(repos.URLsOf(ctx), fork, st, auth.RoleNone)
	return s.Events.Emit(ctx, tx, &events.Event{
		FeedType: "ForkEvent", FeedPayload: map[string]any{"forkee": &forkee},
		HookEvent: "fork", HookPayload: map[string]any{"forkee": &forkee},
		Actor: actor, Repo: src, Public: !src.Private, CreatedAt: s.now(),
	})
}

// RepositoryDeleted emits the repository webhook with action deleted,
// which the organization's hooks receive (the repository's own hooks go
// with it); it is repos.Service.BeforeDelete. The feeds keep the
// repository's earlier events.
func (s *Service) RepositoryDeleted(ctx context.Context, tx *store.Tx, r *repos.Repository, actor *accounts.Account) error {
	return s.Events.Emit(ctx, tx, &events.Event{HookEvent: "repository", HookPayload: map[string]any{"action": "deleted"},
		Actor: actor, Repo: r, Public: !r.Private, CreatedAt: s.now()})
}

// RepositoryUpdated emits the events of a repository change; it is
// repos.Service.AfterUpdate.
//
//   - a transfer: repository webhook, action transferred, with the old
//     owner in changes.owner.from (user or organization);
//   - a rename: repository webhook, action renamed;
//   - a new description or default branch: repository webhook, action
//     edited, with changes;
//   - private to public: PublicEvent (feed) and the public webhook, and
//     the repository webhook with action publicized;
//   - public to private: the repository webhook with action privatized;
//     the repository's earlier events stop being public, so public feeds
//     no longer show them. (Events stored while the repository was
//     private stay private when it becomes public.)
func (s *Service) RepositoryUpdated(ctx context.Context, tx *store.Tx, before, after *repos.Repository, actor *accounts.Account) error {
	now := s.now()
	emit := func(e *events.Event) error {
		e.Actor, e.Repo, e.Public, e.CreatedAt = actor, after, !after.Private, now
		return s.Events.Emit(ctx, tx, e)
	}
	if before.Owner.ID != after.Owner.ID {
		if err := emit(&events.Event{HookEvent: "repository", HookPayload: map[string]any{"action": "transferred",
			"changes": map[string]any{"owner": map[string]any{"from": ownerJSON(httpapi.BaseURL(ctx), before.Owner)}}}}); err != nil {
			return err
		}
	}
	if before.Name != after.Name {
		if err := emit(&events.Event{HookEvent: "repository", HookPayload: map[string]any{"action": "renamed",
			"changes": map[string]any{"repository": map[string]any{"name": map[string]any{"from": before.Name}}}}}); err != nil {
			return err
		}
	}
	if changes := editChanges(before, after); len(changes) > 0 {
		if err := emit(&events.Event{HookEvent: "repository", HookPayload: map[string]any{"action": "edited", "changes": changes}}); err != nil {
			return err
		}
	}
	if before.Archived != after.Archived {
		action := map[bool]string{true: "archived", false: "unarchived"}[after.Archived]
		if err := emit(&events.Event{HookEvent: "repository", HookPayload: map[string]any{"action": action}}); err != nil {
			return err
		}
	}
	switch {
	case before.Private && !after.Private:
		if err := emit(&events.Event{FeedType: "PublicEvent", FeedPayload: emptyPayload{},
			HookEvent: "public", HookPayload: map[string]any{}}); err != nil {
			return err
		}
		return emit(&events.Event{HookEvent: "repository", HookPayload: map[string]any{"action": "publicized"}})
	case !before.Private && after.Private:
		if _, err := tx.ExecContext(ctx, `UPDATE events SET public = $1 WHERE repo_id = $2 AND public`, false, after.ID); err != nil {
			return err
		}
		return emit(&events.Event{HookEvent: "repository", HookPayload: map[string]any{"action": "privatized"}})
	}
	return nil
}

// ownerJSON is a repository owner as the transferred event names the
// old one: {"user": ...} or {"organization": ...}.
func ownerJSON(base string, a *accounts.Account) map[string]any {
	if a.IsOrg() {
		return map[string]any{"organization": accounts.ToSimpleOrg(base, a)}
	}
	return map[string]any{"user": accounts.ToSimpleUser(base, a)}
}

func editChanges(before, after *repos.Repository) map[string]any {
	changes := map[string]any{}
	if before.Description != after.Description {
		changes["description"] = map[string]any{"from": nullable(before.Description)}
	}
	if before.DefaultBranch != after.DefaultBranch {
		changes["default_branch"] = map[string]any{"from": before.DefaultBranch}
	}
	return changes
}

func nullable(s string) any {
	if s == "" {
		return nil
	}
	return s
}
