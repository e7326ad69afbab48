package licenses

import (
	"context"
	"errors"
	"strings"

	"forgeapi/internal/events"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// PushSink keeps each repository's detected license (repository_licenses,
// which the repository object shows) in step with its default branch: it
// detects the license again, in the transaction of the change, when a
// push moves the default branch (git's, or the server's own pushes: API
// writes, merges) and when the default branch changes; a deleted default
// branch has none.
type PushSink struct {
	Repos *repos.Service
}

// HandleEvent handles push events of the default branch and repository
// edited events that change it, and ignores the others.
func (k PushSink) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.Repo == nil {
		return nil
	}
	switch e.HookEvent {
	case "push":
		ref, _ := e.HookPayload["ref"].(string)
		after, _ := e.HookPayload["after"].(string)
		if ref != "refs/heads/"+e.Repo.DefaultBranch {
			return nil
		}
		if strings.Trim(after, "0") == "" {
			return Forget(ctx, tx, e.Repo.ID)
		}
		return k.detect(ctx, tx, e.Repo, after)
	case "repository":
		changes, _ := e.HookPayload["changes"].(map[string]any)
		if e.HookPayload["action"] != "edited" || changes["default_branch"] == nil {
			return nil
		}
		return k.detect(ctx, tx, e.Repo, "refs/heads/"+e.Repo.DefaultBranch)
	}
	return nil
}

// detect keeps the license of the repository's commit rev.
func (k PushSink) detect(ctx context.Context, tx *store.Tx, repo *repos.Repository, rev string) error {
	g, err := gitread.Open(k.Repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	defer g.Close()
	sha, err := g.Resolve(rev)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return Forget(ctx, tx, repo.ID)
	} else if err != nil {
		return err
	}
	d, err := Detect(g, sha)
	if err != nil {
		return err
	}
	if d == nil {
		return Forget(ctx, tx, repo.ID)
	}
	return Keep(ctx, tx, repo.ID, sha, d)
}

// Keep records d as the license of the repository, detected at commit.
func Keep(ctx context.Context, q store.Q, repoID int64, commit string, d *Detected) error {
	_, err := q.ExecContext(ctx, `INSERT INTO repository_licenses (repository_id, license_key, path, commit_sha)
		VALUES ($1, $2, $3, $4) ON CONFLICT (repository_id) DO UPDATE
		SET license_key = excluded.license_key, path = excluded.path, commit_sha = excluded.commit_sha`,
		repoID, d.Key, d.File.Path, commit)
	return err
}

// Forget records that the repository has no license.
func Forget(ctx context.Context, q store.Q, repoID int64) error {
	_, err := q.ExecContext(ctx, `DELETE FROM repository_licenses WHERE repository_id = $1`, repoID)
	return err
}
