package actions

import (
	"context"
	"errors"
	"time"

	"forgeapi/internal/store"
)

// artifactSignedURLTTL is how long an artifact's download address from
// GetSignedArtifactURL works.
const artifactSignedURLTTL = time.Hour

// artifactMethods are the methods of the results service's
// ArtifactService.
func (s *Service) artifactMethods() map[string]twirpMethod {
	return map[string]twirpMethod{
		"CreateArtifact":       s.twirpCreateArtifact,
		"FinalizeArtifact":     s.twirpFinalizeArtifact,
		"ListArtifacts":        s.twirpListArtifacts,
		"GetSignedArtifactURL": s.twirpSignedArtifactURL,
		"DeleteArtifact":       s.twirpDeleteArtifact,
	}
}

// artifactRef is the part every ArtifactService request shares.
type artifactRef struct {
	WorkflowRunBackendID    string `json:"workflow_run_backend_id"`
	WorkflowJobRunBackendID string `json:"workflow_job_run_backend_id"`
	Name                    string `json:"name"`
}

func (s *Service) twirpCreateArtifact(ctx context.Context, c *runtimeCaller, body []byte) (any, error) {
	var req struct {
		artifactRef
		ExpiresAt *time.Time `json:"expires_at"`
		Version   int        `json:"version"`
		MimeType  *string    `json:"mime_type"`
	}
	if err := decodeTwirp(body, &req); err != nil {
		return nil, err
	}
	if err := c.backendIDs(req.WorkflowRunBackendID, req.WorkflowJobRunBackendID); err != nil {
		return nil, err
	}
	if req.Name == "" {
		return nil, twirpInvalid("name is required")
	}
	mime := ""
	if req.MimeType != nil {
		mime = *req.MimeType
	}
	a, token, err := s.createArtifact(ctx, c, req.Name, mime, req.ExpiresAt)
	if errors.Is(err, errArtifactExists) {
		return nil, &twirpError{409, "already_exists", err.Error()[len("actions: "):]}
	}
	if err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "signedUploadUrl": s.uploadURL(ctx, "artifacts", a.ID, token)}, nil
}

func (s *Service) twirpFinalizeArtifact(ctx context.Context, c *runtimeCaller, body []byte) (any, error) {
	var req struct {
		artifactRef
		Size int64String `json:"size"`
		Hash *string     `json:"hash"`
	}
	if err := decodeTwirp(body, &req); err != nil {
		return nil, err
	}
	if err := c.backendIDs(req.WorkflowRunBackendID, req.WorkflowJobRunBackendID); err != nil {
		return nil, err
	}
	a, err := s.finalizeArtifact(ctx, c, req.Name, int64(req.Size), req.Hash)
	switch {
	case errors.Is(err, store.ErrNotFound):
		return nil, twirpNotFound("no upload of the artifact " + req.Name)
	case errors.Is(err, errArtifactExists):
		return nil, &twirpError{409, "already_exists", "the artifact is already finalized"}
	case err != nil:
		return nil, err
	}
	return map[string]any{"ok": true, "artifactId": int64String(a.ID)}, nil
}

func (s *Service) twirpListArtifacts(ctx context.Context, c *runtimeCaller, body []byte) (any, error) {
	var req struct {
		artifactRef
		NameFilter *string      `json:"name_filter"`
		IDFilter   *int64String `json:"id_filter"`
	}
	if err := decodeTwirp(body, &req); err != nil {
		return nil, err
	}
	if err := c.backendIDs(req.WorkflowRunBackendID, ""); err != nil {
		return nil, err
	}
	f := ArtifactFilter{RunID: c.RunID}
	if req.NameFilter != nil {
		f.Name = *req.NameFilter
	}
	list, _, err := listArtifacts(ctx, s.DB, c.RepoID, f, 1000, 0)
	if err != nil {
		return nil, err
	}
	out := []map[string]any{}
	for _, a := range list {
		if a.Expired || (req.IDFilter != nil && int64(*req.IDFilter) != a.ID) {
			continue
		}
		m := map[string]any{"workflowRunBackendId": itoa(a.RunID), "databaseId": int64String(a.ID), "name": a.Name,
			"size": int64String(a.Size), "createdAt": a.CreatedAt.UTC().Format(time.RFC3339)}
		if a.JobID != nil {
			m["workflowJobRunBackendId"] = itoa(*a.JobID)
		}
		if a.Digest != nil {
			m["digest"] = *a.Digest
		}
		out = append(out, m)
	}
	return map[string]any{"artifacts": out}, nil
}

func (s *Service) twirpSignedArtifactURL(ctx context.Context, c *runtimeCaller, body []byte) (any, error) {
	var req artifactRef
	if err := decodeTwirp(body, &req); err != nil {
		return nil, err
	}
	if err := c.backendIDs(req.WorkflowRunBackendID, ""); err != nil {
		return nil, err
	}
	a, err := runArtifact(ctx, s.DB, c.RunID, req.Name)
	if errors.Is(err, store.ErrNotFound) || (err == nil && (!a.Finalized || a.Expired)) {
		return nil, twirpNotFound("no artifact named " + req.Name + " in the workflow run")
	}
	if err != nil {
		return nil, err
	}
	u, err := s.Blobs.URL(ctx, artifactKey(a.ID), artifactSignedURLTTL)
	if err != nil {
		return nil, err
	}
	return map[string]any{"signedUrl": reachedURL(ctx, s.BaseURL, u)}, nil
}

func (s *Service) twirpDeleteArtifact(ctx context.Context, c *runtimeCaller, body []byte) (any, error) {
	var req artifactRef
	if err := decodeTwirp(body, &req); err != nil {
		return nil, err
	}
	if err := c.backendIDs(req.WorkflowRunBackendID, ""); err != nil {
		return nil, err
	}
	a, err := runArtifact(ctx, s.DB, c.RunID, req.Name)
	if errors.Is(err, store.ErrNotFound) {
		return nil, twirpNotFound("no artifact named " + req.Name + " in the workflow run")
	}
	if err != nil {
		return nil, err
	}
	if err := s.DeleteArtifact(ctx, c.RepoID, a.ID); err != nil {
		return nil, err
	}
	return map[string]any{"ok": true, "artifactId": int64String(a.ID)}, nil
}
