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
	return DetectAt(ctx, tx, repo.ID, k.Repos.GitDir(repo.ID), rev)
}

// DetectAt detects the license of the commit rev of the bare repository
// gitDir and keeps it as the repository's (none when rev names no commit
// or its root has no license file). It serves changes made before the
// repository's git directory is in place: a repository created with
// files (auto_init, license_template, a template's copy) calls it in its
// creating transaction with its staging directory and "HEAD".
func DetectAt(ctx context.Context, q store.Q, repoID int64, gitDir, rev string) error {
	g, err := gitread.Open(gitDir)
	if err != nil {
		return err
	}
	defer g.Close()
	sha, err := g.Resolve(rev)
	if errors.Is(err, gitread.ErrRevisionNotFound) {
		return Forget(ctx, q, repoID)
	} else if err != nil {
		return err
	}
	d, err := Detect(g, sha)
	if err != nil {
		return err
	}
	if d == nil {
		return Forget(ctx, q, repoID)
	}
	return Keep(ctx, q, repoID, sha, d)
}

// CopyFork gives a new fork the license of its source (the fork's git
// data is a copy of the source's, default branch included).
func CopyFork(ctx context.Context, q store.Q, srcID, forkID int64) error {
	_, err := q.ExecContext(ctx, `INSERT INTO repository_licenses (repository_id, license_key, path, commit_sha)
		SELECT $1, license_key, path, commit_sha FROM repository_licenses WHERE repository_id = $2`, forkID, srcID)
	return err
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
