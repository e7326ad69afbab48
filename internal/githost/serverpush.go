package githost

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/githttp"
	"forgeapi/internal/repos/gitread"
)

// ServerPush moves references of the repository as a push by pusher, for
// the changes the server makes itself (the contents API): the objects are
// in the repository already. It is the same change as a git push: a
// repository locked for a migration refuses it, the push checks run (the
// agents ruleset; a veto is a 409 with its reason), the push is logged
// before any reference moves (the Recoverer records it after a crash),
// the references move in one `git update-ref` transaction that checks
// each one's old value (a reference that moved meanwhile is a 409, and
// nothing moves), and the push events are recorded exactly once.
func (h *Handler) ServerPush(ctx context.Context, repo *repos.Repository, pusher *accounts.Account, updates []githttp.RefUpdate) error {
	if repo.MigrationLocked {
		return repos.ErrLocked()
	}
	dir := h.Repos.GitDir(repo.ID)
	inspect := githttp.NewRepositoryInspector(dir)
	for _, check := range h.checks {
		err := check(ctx, &Push{Repo: repo, Pusher: pusher, Updates: updates, Inspect: inspect})
		if refusal, ok := errors.AsType[*githttp.RefusalError](err); ok {
			return apierr.New(http.StatusConflict, "Repository rule violations found: %s", refusal.Message)
		}
		if err != nil {
			return err
		}
	}
	entry := &pushLogEntry{RepoID: repo.ID, PusherID: pusher.ID, Key: newPushKey(), Updates: updates}
	if err := readStateBefore(dir, entry); err != nil {
		return err
	}
	id, err := logPush(ctx, h.DB, entry)
	if err != nil {
		return err
	}
	h.live.Store(id, struct{}{})
	defer h.live.Delete(id)
	if err := updateRefs(ctx, dir, pusher, entry.Key, updates); err != nil {
		// Nothing moved: the log row has nothing to recover.
		_, _ = h.DB.ExecContext(context.WithoutCancel(ctx), `DELETE FROM push_log WHERE id = $1`, id)
		return err
	}
	g, err := gitread.Open(dir)
	if err != nil {
		return err
	}
	defer g.Close()
	entry.ID = id
	return h.recordPush(ctx, g, entry, updates)
}

// updateRefs moves the references in one transaction of `git update-ref`,
// each checked against its old value (the zero SHA: must not exist), with
// the push's key as the reflog's committer email, as receive-pack writes
// it (the Recoverer reads it). A reference whose value is not the old one
// is a 409.
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
	cmd := exec.CommandContext(ctx, "git", "-c", "core.logAllRefUpdates=always", "update-ref", "--create-reflog", "--stdin")
	cmd.Dir = dir
	cmd.Env = []string{"GIT_DIR=" + dir, "GIT_CONFIG_NOSYSTEM=1", "HOME=" + dir, "PATH=" + os.Getenv("PATH"),
		"GIT_COMMITTER_NAME=" + pusher.Login, "GIT_COMMITTER_EMAIL=" + key}
	cmd.Stdin = strings.NewReader(in.String())
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		msg := stderr.String()
		if strings.Contains(msg, "expected") || strings.Contains(msg, "cannot lock ref") || strings.Contains(msg, "reference already exists") {
			return apierr.New(http.StatusConflict, "The reference moved while the change was made: try again with its new value.")
		}
		return fmt.Errorf("git update-ref: %w: %s", err, strings.TrimSpace(msg))
	}
	return nil
}
