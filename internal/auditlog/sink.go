package auditlog

import (
	"context"
	"encoding/json"

	"forgeapi/internal/events"
	"forgeapi/internal/store"
)

// Sink records the organization's administrative changes that emit
// domain events, in the event's transaction: repositories created,
// deleted, renamed, transferred (in the logs of the organizations on both
// sides), made public or private; members added, invited, removed; the
// organization renamed or its deletion requested (the entries go with the
// organization's row); users blocked and unblocked; collaborators added,
// changed, removed. Other events it ignores.
type Sink struct{}

// actions maps a webhook event and action to the platform's audit action.
var actions = map[[2]string]string{
	{"repository", "created"}:          "repo.create",
	{"repository", "deleted"}:          "repo.destroy",
	{"repository", "renamed"}:          "repo.rename",
	{"repository", "transferred"}:      "repo.transfer",
	{"repository", "privatized"}:       "repo.access",
	{"repository", "publicized"}:       "repo.access",
	{"repository", "archived"}:         "repo.archived",
	{"repository", "unarchived"}:       "repo.unarchived",
	{"organization", "member_added"}:   "org.add_member",
	{"organization", "member_invited"}: "org.invite_member",
	{"organization", "member_removed"}: "org.remove_member",
	{"organization", "renamed"}:        "org.rename",
	{"organization", "deleted"}:        "org.delete",
	{"org_block", "blocked"}:           "org.block_user",
	{"org_block", "unblocked"}:         "org.unblock_user",
	{"member", "added"}:                "repo.add_member",
	{"member", "edited"}:               "repo.update_member",
	{"member", "removed"}:              "repo.remove_member",
}

// HandleEvent implements events.Sink.
func (Sink) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.HookEvent == "" || e.Org == nil && !(e.HookEvent == "repository" && e.Repo != nil) {
		return nil
	}
	verb, _ := e.HookPayload["action"].(string)
	action, ok := actions[[2]string{e.HookEvent, verb}]
	if !ok {
		return nil
	}
	payload := decoded(e.HookPayload)
	entry := Entry{Action: action, Actor: e.Actor, User: affectedUser(payload), At: e.CreatedAt,
		Data: map[string]any{}}
	if e.Repo != nil {
		entry.Repo = e.Repo.Owner.Login + "/" + e.Repo.Name
		entry.Data["visibility"] = visibility(e.Repo.Private)
	}
	if verb == "privatized" || verb == "publicized" {
		entry.Data["previous_visibility"] = visibility(verb == "publicized")
	}
	if e.Org != nil {
		entry.OrgID = e.Org.ID
		if err := Record(ctx, tx, entry); err != nil {
			return err
		}
	}
	return recordTransferOut(ctx, tx, entry, payload)
}

// recordTransferOut records a repository transferred from one
// organization to another owner in the former's audit log too (the event
// names the new owner's organization, if any).
func recordTransferOut(ctx context.Context, tx store.Q, entry Entry, payload map[string]any) error {
	if entry.Action != "repo.transfer" {
		return nil
	}
	changes, _ := payload["changes"].(map[string]any)
	owner, _ := changes["owner"].(map[string]any)
	from, _ := owner["from"].(map[string]any)
	org, _ := from["organization"].(map[string]any)
	id, ok := org["id"].(float64)
	if !ok || int64(id) == entry.OrgID {
		return nil
	}
	entry.OrgID = int64(id)
	return Record(ctx, tx, entry)
}

func visibility(private bool) string {
	if private {
		return "private"
	}
	return "public"
}

// decoded is the payload as plain JSON values (its fields may be typed
// structs).
func decoded(payload map[string]any) map[string]any {
	var out map[string]any
	if b, err := json.Marshal(payload); err == nil {
		_ = json.Unmarshal(b, &out)
	}
	return out
}

// affectedUser is the login of the user the payload is about: a
// membership's, an invited or blocked user's, a collaborator's.
func affectedUser(payload map[string]any) string {
	for _, path := range [][]string{{"membership", "user"}, {"user"}, {"blocked_user"}, {"member"}} {
		v := any(payload)
		for _, key := range path {
			m, _ := v.(map[string]any)
			v = m[key]
		}
		if u, ok := v.(map[string]any); ok {
			if login, ok := u["login"].(string); ok {
				return login
			}
		}
	}
	return ""
}
