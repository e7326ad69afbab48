package actions

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/store"
)

// Artifact is a file set a job uploaded (the results service's v4
// artifact: one zip, immutable once finalized).
type Artifact struct {
	ID         int64
	RepoID     int64
	RunID      int64
	JobID      *int64
	Name       string
	MimeType   string
	Size       int64
	Digest     *string
	Finalized  bool
	Expired    bool
	CreatedAt  time.Time
	UpdatedAt  time.Time
	ExpiresAt  time.Time
	HeadSHA    string  // of its run
	HeadBranch *string // of its run
}

// Policies gives the runs their repository's Actions settings: the
// GITHUB_TOKEN's default permissions ("read" or "write") and the
// artifact and log retention in days. The settings area implements it;
// without one the platform's defaults apply (read, 90 days).
type Policies interface {
	RunPolicy(ctx context.Context, repoID int64) (defaultPermissions string, retentionDays int, err error)
}

// defaultRetentionDays is the retention without Policies.
const defaultRetentionDays = 90

// artifactKey is the blob key of an artifact's zip.
func artifactKey(id int64) string { return "actions-artifact-" + itoa(id) + ".zip" }

const artifactColumns = `a.id, a.repository_id, a.run_id, a.job_id, a.name, a.mime_type, a.size_in_bytes, a.digest, a.finalized,
	a.expired, a.created_at, a.updated_at, a.expires_at, r.head_sha, r.head_branch`

const artifactFrom = ` FROM actions_artifacts a JOIN actions_runs r ON r.id = a.run_id`

func scanArtifact(row store.Scanner) (*Artifact, error) {
	var a Artifact
	err := row.Scan(&a.ID, &a.RepoID, &a.RunID, &a.JobID, &a.Name, &a.MimeType, &a.Size, &a.Digest, &a.Finalized, &a.Expired,
		&a.CreatedAt, &a.UpdatedAt, &a.ExpiresAt, &a.HeadSHA, &a.HeadBranch)
	return &a, store.Normalize(err)
}

// ArtifactFilter selects the finalized artifacts of a repository (and of
// a run, when RunID is set) by exact name.
type ArtifactFilter struct {
	RunID int64
	Name  string
}

// listArtifacts lists the finalized artifacts, newest first, with their
// total.
func listArtifacts(ctx context.Context, q store.Q, repoID int64, f ArtifactFilter, limit, offset int) ([]*Artifact, int, error) {
	where, args := ` WHERE a.repository_id = $1 AND a.finalized`, []any{repoID}
	if f.RunID != 0 {
		args = append(args, f.RunID)
		where += ` AND a.run_id = $` + itoa(int64(len(args)))
	}
	if f.Name != "" {
		args = append(args, f.Name)
		where += ` AND a.name = $` + itoa(int64(len(args)))
	}
	var total int
	if err := q.QueryRowContext(ctx, `SELECT COUNT(*)`+artifactFrom+where, args...).Scan(&total); err != nil {
		return nil, 0, err
	}
	args = append(args, limit, offset)
	rows, err := q.QueryContext(ctx, `SELECT `+artifactColumns+artifactFrom+where+` ORDER BY a.id DESC LIMIT $`+
		itoa(int64(len(args)-1))+` OFFSET $`+itoa(int64(len(args))), args...)
	list, err := store.ScanAll(rows, err, scanArtifact)
	return list, total, err
}

// artifactByID is a finalized artifact of the repository.
func artifactByID(ctx context.Context, q store.Q, repoID, id int64) (*Artifact, error) {
	return scanArtifact(q.QueryRowContext(ctx, `SELECT `+artifactColumns+artifactFrom+
		` WHERE a.repository_id = $1 AND a.id = $2 AND a.finalized`, repoID, id))
}

// runArtifact is the artifact of the run by name (finalized or not).
func runArtifact(ctx context.Context, q store.Q, runID int64, name string) (*Artifact, error) {
	return scanArtifact(q.QueryRowContext(ctx, `SELECT `+artifactColumns+artifactFrom+
		` WHERE a.run_id = $1 AND a.name = $2 ORDER BY a.id DESC LIMIT 1`, runID, name))
}

// retention is the repository's retention, in days.
func (s *Service) retention(ctx context.Context, repoID int64) (int, error) {
	if s.Policies == nil {
		return defaultRetentionDays, nil
	}
	_, days, err := s.Policies.RunPolicy(ctx, repoID)
	if days <= 0 {
		days = defaultRetentionDays
	}
	return days, err
}

// errArtifactExists is a second artifact of one name in a run.
var errArtifactExists = errors.New("actions: an artifact with this name already exists on the workflow run")

// createArtifact starts the upload of the job's artifact: a row with a
// new upload token, expiring at expiresAt (nil: the repository's
// retention; no later than it). A finalized artifact of the name in the
// run is errArtifactExists; an unfinished one is replaced.
func (s *Service) createArtifact(ctx context.Context, c *runtimeCaller, name, mime string, expiresAt *time.Time) (*Artifact, string, error) {
	days, err := s.retention(ctx, c.RepoID)
	if err != nil {
		return nil, "", err
	}
	token := randomToken()
	var a *Artifact
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		old, err := runArtifact(ctx, tx, c.RunID, name)
		switch {
		case err == nil && old.Finalized:
			return errArtifactExists
		case err == nil:
			if _, err := tx.ExecContext(ctx, `DELETE FROM actions_artifacts WHERE id = $1`, old.ID); err != nil {
				return err
			}
		case !errors.Is(err, store.ErrNotFound):
			return err
		}
		now := tx.Now()
		limit := now.AddDate(0, 0, days)
		if expiresAt == nil || expiresAt.After(limit) || expiresAt.Before(now) {
			expiresAt = &limit
		}
		if mime == "" {
			mime = "application/zip"
		}
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO actions_artifacts (repository_id, run_id, job_id, name, mime_type,
			upload_token_hash, created_at, updated_at, expires_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $8) RETURNING id`,
			c.RepoID, c.RunID, c.JobID, name, mime, hashToken(token), now, expiresAt.UTC()).Scan(&id); err != nil {
			return store.Normalize(err)
		}
		a, err = runArtifact(ctx, tx, c.RunID, name)
		return err
	})
	return a, token, err
}

// finalizeArtifact ends the upload of the run's artifact: finalized, its
// digest and size (the size stored by the upload, else the client's).
func (s *Service) finalizeArtifact(ctx context.Context, c *runtimeCaller, name string, size int64, digest *string) (*Artifact, error) {
	a, err := runArtifact(ctx, s.DB, c.RunID, name)
	if err != nil {
		return nil, err
	}
	if a.Finalized {
		return nil, errArtifactExists
	}
	if rc, err := s.Blobs.Open(ctx, artifactKey(a.ID)); err != nil {
		return nil, store.ErrNotFound // nothing was uploaded
	} else {
		_ = rc.Close()
	}
	_, err = s.DB.ExecContext(ctx, `UPDATE actions_artifacts SET finalized = TRUE, digest = $1, upload_token_hash = '',
		size_in_bytes = CASE WHEN size_in_bytes > 0 THEN size_in_bytes ELSE $2 END, updated_at = $3 WHERE id = $4`,
		digest, size, store.Now(), a.ID)
	if err != nil {
		return nil, err
	}
	return artifactByID(ctx, s.DB, a.RepoID, a.ID)
}

// DeleteArtifact deletes the repository's artifact and its zip.
func (s *Service) DeleteArtifact(ctx context.Context, repoID, id int64) error {
	n, err := store.Affected(s.DB.ExecContext(ctx, `DELETE FROM actions_artifacts WHERE repository_id = $1 AND id = $2`, repoID, id))
	if err != nil {
		return err
	}
	if n == 0 {
		return store.ErrNotFound
	}
	if s.Blobs != nil {
		return s.Blobs.Delete(ctx, artifactKey(id))
	}
	return nil
}

// runArtifactIDs are the ids of all the run's artifacts (finalized or
// not).
func runArtifactIDs(ctx context.Context, q store.Q, runID int64) ([]int64, error) {
	rows, err := q.QueryContext(ctx, `SELECT id FROM actions_artifacts WHERE run_id = $1`, runID)
	return store.ScanAll(rows, err, store.ScanID)
}

// deleteArtifactBlobs deletes the zips of the artifacts of ids (their
// rows went with their run).
func (s *Service) deleteArtifactBlobs(ctx context.Context, ids []int64) error {
	if s.Blobs == nil {
		return nil
	}
	for _, id := range ids {
		if err := s.Blobs.Delete(ctx, artifactKey(id)); err != nil {
			return err
		}
	}
	return nil
}
