package githost

import (
	"context"
	"fmt"

	"forgeapi/internal/store"
)

// A PushIntent is a change that a server push makes besides moving its
// references: the API's merge of a pull request, whose pull request is
// merged with the push's new commit. It is logged with the push (its
// push_log row) and carried out by whoever records the push, in the
// transaction that records the push's events, before them: the request
// that pushed or, when the process died between the move of the
// references and that transaction, the Recoverer. So the change is made
// once, with the push, and only when the push's references moved: after
// a crash it is either not visible at all or visible whole.
type PushIntent struct {
	// Kind names the IntentHandler registered for it with HandleIntent.
	Kind string
	// Subject names what the intent applies to, for the handler (a pull
	// request's number).
	Subject string
}

// An IntentHandler carries out the intent of a recorded push, in tx,
// the push's recording transaction. push holds the repository, the
// pusher and the push's updates, all applied (Inspect is nil). An error
// rolls the recording back: the push's push_log row stays, for the
// Recoverer to try again.
type IntentHandler func(ctx context.Context, tx *store.Tx, push *Push, subject string) error

// HandleIntent registers the handler of the intents of a kind. Call it
// at start.
func (h *Handler) HandleIntent(kind string, fn IntentHandler) {
	if h.intents == nil {
		h.intents = map[string]IntentHandler{}
	}
	h.intents[kind] = fn
}

// IntentPending reports whether a push with the intent is logged in the
// repository and not recorded yet: under way (on any server), or cut
// short by a crash and waiting for the Recoverer, which records it (and
// carries out the intent) if its references moved and drops it
// otherwise.
func (h *Handler) IntentPending(ctx context.Context, repoID int64, intent PushIntent) (bool, error) {
	var n int
	err := h.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM push_log WHERE repository_id = $1 AND intent_kind = $2 AND intent_subject = $3`,
		repoID, intent.Kind, intent.Subject).Scan(&n)
	if err != nil {
		return false, store.Normalize(err)
	}
	return n > 0, nil
}

// carryOut runs the handler of the entry's intent for push, when it has
// one and every update of the push was applied (a server push moves all
// its references or none).
func (h *Handler) carryOut(ctx context.Context, tx *store.Tx, e *pushLogEntry, push *Push) error {
	if e.Intent.Kind == "" || len(push.Updates) != len(e.Updates) {
		return nil
	}
	fn := h.intents[e.Intent.Kind]
	if fn == nil {
		return fmt.Errorf("push intent %q: no handler", e.Intent.Kind)
	}
	return fn(ctx, tx, push, e.Intent.Subject)
}
