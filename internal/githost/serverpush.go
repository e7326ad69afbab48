package githost

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
)

// ServerPush moves references of the repository as a push by pusher, for
// the changes the server makes itself (the contents API): the objects are
// in the repository already. It is the same change as a git push: a
// repository locked for a migration refuses it, the push checks run (the
// agents ruleset, rulesets, branch protection; a veto is a 409 with its
// reason: the refusal's APIMessage when it has one), the push is logged
// before any reference moves (the Recoverer records it after a crash),
// the references move in one `git update-ref` transaction that checks
// each one's old value (a reference that moved meanwhile is a 409 that
// matches ErrRefMoved, and nothing moves), and the push events are
// recorded exactly once.
//
// An error means nothing moved. Once the references moved, the change is
// made and ServerPush reports success whatever follows: a recording that
// fails (the database unavailable, say) is logged and left, with its
// push_log row, to the Recoverer.
func (h *Handler) ServerPush(ctx context.Context, repo *repos.Repository, pusher *accounts.Account, updates []githttp.RefUpdate) error {
	return h.ServerPushWith(ctx, repo, pusher, updates, PushIntent{})
}

// ServerPushWith is ServerPush with an intent (see PushIntent), logged
// with the push and carried out in the transaction that records it.
func (h *Handler) ServerPushWith(ctx context.Context, repo *repos.Repository, pusher *accounts.Account, updates []githttp.RefUpdate, intent PushIntent) error {
	if repo.MigrationLocked {
		return repos.ErrLocked()
	}
	if repo.Archived {
		return repos.ErrArchived()
	}
	dir := h.Repos.GitDir(repo.ID)
	inspect := githttp.NewRepositoryInspector(dir)
	for _, check := range h.checks {
		err := check(ctx, &Push{Repo: repo, Pusher: pusher, Updates: updates, Inspect: inspect, Intent: intent, ByServer: true})
		if refusal, ok := errors.AsType[*githttp.RefusalError](err); ok && refusal.APIMessage != "" {
			return apierr.New(http.StatusConflict, "%s", refusal.APIMessage)
		} else if ok {
			return apierr.New(http.StatusConflict, "%s", ruleViolation(refusal.Message))
		}
		if err != nil {
			return err
		}
	}
	entry := &pushLogEntry{RepoID: repo.ID, PusherID: pusher.ID, Key: newPushKey(), Updates: updates, Intent: intent}
	if err := readStateBefore(dir, entry); err != nil {
		return err
	}
	id, err := logPush(ctx, h.DB, entry)
	if err != nil {
		return err
	}
	entry.ID = id
	h.live.Store(id, struct{}{})
	defer h.live.Delete(id)
	// From here on the change runs to its end whether or not the client
	// waits for it: a git update-ref killed half way would leave the
	// references' fate for the Recoverer to find out.
	ctx = context.WithoutCancel(ctx)
	if err := updateRefs(ctx, dir, pusher, entry.Key, updates); err != nil {
		// Nothing moved: the log row has nothing to recover.
		_, _ = h.DB.ExecContext(ctx, `DELETE FROM push_log WHERE id = $1`, id)
		return err
	}
	if err := h.recordServerPush(ctx, dir, entry); err != nil {
		h.logger().Error("record a server push: left to the push recovery", "push_log_id", id, "repository_id", repo.ID, "err", err)
	}
	return nil
}

// recordServerPush records a server push whose references moved.
func (h *Handler) recordServerPush(ctx context.Context, dir string, e *pushLogEntry) error {
	g, err := gitread.Open(dir)
	if err != nil {
		return err
	}
	defer g.Close()
	return h.recordPush(ctx, g, e, e.Updates)
}

// ErrRefMoved matches the error of a server push refused because a
// reference was not at its old value any more (another change moved it
// meanwhile): nothing moved. The error is also the 409 the contents and
// refs APIs answer.
var ErrRefMoved = errors.New("reference moved")

// refMovedError is ErrRefMoved as a client-facing 409.
type refMovedError struct{ answer *apierr.Error }

func (e refMovedError) Error() string        { return e.answer.Error() }
func (e refMovedError) Is(target error) bool { return target == ErrRefMoved }
func (e refMovedError) Unwrap() error        { return e.answer }

func (h *Handler) logger() *slog.Logger {
	if h.Logger == nil {
		return slog.Default()
	}
	return h.Logger
}

// updateRefs moves the references in one transaction of `git update-ref`,
// each checked against its old value (the zero SHA: must not exist), with
// the push's key as the reflog's committer email, as receive-pack writes
// it (the Recoverer reads it). A reference whose value is not the old one
// is a 409 that matches ErrRefMoved.
func updateRefs(ctx context.Context, dir string, pusher *accounts.Account, key string, updates []githttp.RefUpdate) error {
	var in strings.Builder
	in.WriteString("start\n")
	for _, u := range updates {
		if u.IsDelete() {
			fmt.Fprintf(&in, "delete %s %s\n", u.Ref, u.OldSHA)
		} else {
			fmt.Fprintf(&in, "update %s %s %s\n", u.Ref, u.NewSHA, u.OldSHA)
		}
	}
	in.WriteString("prepare\ncommit\n")
	git := gitcmd.In(dir).With("GIT_COMMITTER_NAME="+pusher.Login, "GIT_COMMITTER_EMAIL="+key)
	_, err := git.Output(ctx, strings.NewReader(in.String()), "-c", "core.logAllRefUpdates=always", "update-ref", "--create-reflog", "--stdin")
	if gitErr, ok := errors.AsType[*gitcmd.Error](err); ok {
		msg := gitErr.Stderr
		if strings.Contains(msg, "expected") || strings.Contains(msg, "cannot lock ref") || strings.Contains(msg, "reference already exists") {
			return refMovedError{apierr.New(http.StatusConflict, "The reference moved while the change was made: try again with its new value.")}
		}
	}
	return err
}

// ruleViolation is the API's message of a push check's refusal: the
// refusal's own text, prefixed as the platform's rule violations are
// unless the check already wrote the prefix.
func ruleViolation(refusal string) string {
	const prefix = "Repository rule violations found"
	if strings.HasPrefix(refusal, prefix) {
		return refusal
	}
	return prefix + ": " + refusal
}
