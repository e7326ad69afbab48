package checks

import (
	"context"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apps"
	"forgeapi/internal/events"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// appOnly reports whether an event's action goes to the app of the run or
// suite alone, as the platform sends it: requested, rerequested and
// requested_action; created and completed go to the repository's and
// organization's hooks and to every app installed that subscribes.
func appOnly(action string) bool {
	return action == "requested" || action == "rerequested" || action == "requested_action"
}

// emitRun emits check_run with the action about r; extra is the
// requested_action object of that action.
func (s *Service) emitRun(ctx context.Context, tx *store.Tx, v *view, action string, r *Run, suite *Suite, actor *accounts.Account, extra map[string]any) error {
	if s.Events == nil {
		return nil
	}
	j, err := v.run(r, suite)
	if err != nil {
		return err
	}
	payload := map[string]any{"action": action, "check_run": j}
	if extra != nil {
		payload["requested_action"] = extra
	}
	return s.emit(ctx, tx, v, "check_run", payload, r.AppID, actor, appOnly(action))
}

// emitSuite emits check_suite with the action about the suite, to its
// app alone when toApp.
func (s *Service) emitSuite(ctx context.Context, tx *store.Tx, v *view, action string, suite *Suite, actor *accounts.Account, toApp bool) error {
	if s.Events == nil {
		return nil
	}
	j, err := v.suite(suite, false)
	if err != nil {
		return err
	}
	return s.emit(ctx, tx, v, "check_suite", map[string]any{"action": action, "check_suite": j}, suite.AppID, actor, toApp)
}

// emit emits the event in the view's repository; toApp addresses it to
// appID's installation on the repository's owner alone (nothing when the
// app is no longer installed there).
func (s *Service) emit(ctx context.Context, tx *store.Tx, v *view, event string, payload map[string]any, appID int64, actor *accounts.Account, toApp bool) error {
	e := &events.Event{HookEvent: event, HookPayload: payload, Actor: actor, Repo: v.repo, Public: !v.repo.Private}
	if toApp {
		inst, err := apps.InstallationOn(ctx, tx, appID, v.repo.Owner.ID)
		if errors.Is(err, store.ErrNotFound) {
			return nil
		}
		if err != nil {
			return err
		}
		if inst.Suspended() || !inst.Selects(v.repo) {
			return nil
		}
		e.ToApp = &events.AppInstallation{AppID: appID, InstallationID: inst.ID}
		payload["installation"] = map[string]any{"id": inst.ID, "node_id": wire.NodeID("IN", inst.ID)}
	}
	return s.Events.Emit(ctx, tx, e)
}
