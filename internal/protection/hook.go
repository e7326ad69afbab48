package protection

import (
	"context"
	"reflect"

	"forgeapi/internal/accounts"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// level is an enforcement level of the webhook's rule: off, non_admins,
// or everyone (when admins are enforced too).
func level(on, admins bool) string {
	switch {
	case !on:
		return "off"
	case admins:
		return "everyone"
	}
	return "non_admins"
}

// hookRule renders the protection as the rule of branch_protection_rule
// payloads (the platform's webhooks_rule).
func hookRule(ctx context.Context, q store.Q, p *Protection) (map[string]any, error) {
	st := p.Settings
	admins := st.EnforceAdmins
	reviews := st.Reviews
	if reviews == nil {
		reviews = &Reviews{}
	}
	checks := []string{}
	strict := false
	if st.StatusChecks != nil {
		checks, strict = st.StatusChecks.Contexts(), st.StatusChecks.Strict
	}
	names, err := actorNames(ctx, q, st.Restrictions)
	if err != nil {
		return nil, err
	}
	return map[string]any{
		"id": p.ID, "repository_id": p.RepoID, "name": p.Branch,
		"created_at": wire.T(p.CreatedAt), "updated_at": wire.T(p.UpdatedAt),
		"pull_request_reviews_enforcement_level":       level(st.Reviews != nil, admins),
		"required_approving_review_count":              reviews.Count,
		"dismiss_stale_reviews_on_push":                reviews.DismissStale,
		"require_code_owner_review":                    reviews.CodeOwners,
		"require_last_push_approval":                   reviews.LastPush,
		"authorized_dismissal_actors_only":             reviews.Dismissal != nil,
		"ignore_approvals_from_contributors":           false,
		"required_status_checks":                       checks,
		"required_status_checks_enforcement_level":     level(st.StatusChecks != nil, admins),
		"strict_required_status_checks_policy":         strict,
		"signature_requirement_enforcement_level":      level(st.Signatures, admins),
		"linear_history_requirement_enforcement_level": level(st.LinearHistory, admins),
		"lock_branch_enforcement_level":                level(st.LockBranch, admins),
		"lock_allows_fork_sync":                        st.ForkSyncing,
		"admin_enforced":                               admins,
		"allow_force_pushes_enforcement_level":         level(st.ForcePushes, admins),
		"allow_deletions_enforcement_level":            level(st.Deletions, admins),
		"merge_queue_enforcement_level":                "off",
		"required_deployments_enforcement_level":       "off",
		"required_conversation_resolution_level":       level(st.ConversationResolution, admins),
		"authorized_actors_only":                       st.Restrictions != nil,
		"authorized_actor_names":                       names,
		"create_protected":                             st.BlockCreations,
	}, nil
}

// actorNames are the logins of the restrictions' users.
func actorNames(ctx context.Context, q store.Q, a *Actors) ([]string, error) {
	out := []string{}
	if a == nil {
		return out, nil
	}
	for _, id := range a.Users {
		u, err := accounts.ByID(ctx, q, id)
		if err != nil {
			continue // gone
		}
		out = append(out, u.Login)
	}
	return out, nil
}

// changedKeys are the rule's fields whose change an edited payload
// shows, as the platform's schema lists them.
var changedKeys = []string{"admin_enforced", "authorized_actor_names", "authorized_actors_only",
	"authorized_dismissal_actors_only", "linear_history_requirement_enforcement_level", "lock_allows_fork_sync",
	"lock_branch_enforcement_level", "pull_request_reviews_enforcement_level", "require_last_push_approval",
	"required_status_checks", "required_status_checks_enforcement_level"}

// changes is the edited payload's changes: {field: {from: old}} for each
// field that changed.
func changes(old, now map[string]any) map[string]any {
	out := map[string]any{}
	for _, k := range changedKeys {
		if !reflect.DeepEqual(old[k], now[k]) {
			out[k] = map[string]any{"from": old[k]}
		}
	}
	return out
}
