package actions

import (
	"net/http"
	"time"

	"forgeapi/internal/apierr"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/wire"
)

// artifactJSON is the platform's artifact.
type artifactJSON struct {
	ID                 int64           `json:"id"`
	NodeID             string          `json:"node_id"`
	Name               string          `json:"name"`
	SizeInBytes        int64           `json:"size_in_bytes"`
	URL                string          `json:"url"`
	ArchiveDownloadURL string          `json:"archive_download_url"`
	Expired            bool            `json:"expired"`
	CreatedAt          time.Time       `json:"created_at"`
	ExpiresAt          time.Time       `json:"expires_at"`
	UpdatedAt          time.Time       `json:"updated_at"`
	Digest             *string         `json:"digest"`
	WorkflowRun        artifactRunJSON `json:"workflow_run"`
}

type artifactRunJSON struct {
	ID               int64   `json:"id"`
	RepositoryID     int64   `json:"repository_id"`
	HeadRepositoryID int64   `json:"head_repository_id"`
	HeadBranch       *string `json:"head_branch"`
	HeadSHA          string  `json:"head_sha"`
}

func (v *view) artifact(a *Artifact) artifactJSON {
	url := v.api() + "/actions/artifacts/" + itoa(a.ID)
	return artifactJSON{ID: a.ID, NodeID: wire.NodeID("Artifact", a.ID), Name: a.Name, SizeInBytes: a.Size, URL: url,
		ArchiveDownloadURL: url + "/zip", Expired: a.Expired, CreatedAt: a.CreatedAt.UTC(), ExpiresAt: a.ExpiresAt.UTC(),
		UpdatedAt: a.UpdatedAt.UTC(), Digest: a.Digest,
		WorkflowRun: artifactRunJSON{ID: a.RunID, RepositoryID: a.RepoID, HeadRepositoryID: a.RepoID, HeadBranch: a.HeadBranch, HeadSHA: a.HeadSHA}}
}

// listArtifacts answers GET .../actions/artifacts (name: exact name).
func (h *Handler) listArtifacts(w http.ResponseWriter, r *http.Request) error {
	return h.writeArtifacts(w, r, 0)
}

// listRunArtifacts answers GET .../runs/{run_id}/artifacts: the run's
// artifacts (gh run view and gh run download read this list).
func (h *Handler) listRunArtifacts(w http.ResponseWriter, r *http.Request) error {
	run, err := h.run(r)
	if err != nil {
		return err
	}
	return h.writeArtifacts(w, r, run.ID)
}

func (h *Handler) writeArtifacts(w http.ResponseWriter, r *http.Request, runID int64) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	repo := repos.From(r.Context())
	list, total, err := listArtifacts(r.Context(), h.Service.DB, repo.ID, ArtifactFilter{RunID: runID, Name: r.URL.Query().Get("name")},
		page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	v := newView(r.Context(), h.Service.DB, repo)
	out := make([]artifactJSON, 0, len(list))
	for _, a := range list {
		out = append(out, v.artifact(a))
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, map[string]any{"total_count": total, "artifacts": out})
	return nil
}

// artifact reads {artifact_id}.
func (h *Handler) artifact(r *http.Request) (*Artifact, error) {
	id, err := httpapi.PathInt64(r, "artifact_id")
	if err != nil {
		return nil, err
	}
	return artifactByID(r.Context(), h.Service.DB, repos.From(r.Context()).ID, id)
}

// getArtifact answers GET .../actions/artifacts/{artifact_id}.
func (h *Handler) getArtifact(w http.ResponseWriter, r *http.Request) error {
	a, err := h.artifact(r)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, newView(r.Context(), h.Service.DB, repos.From(r.Context())).artifact(a))
	return nil
}

// deleteArtifact answers DELETE .../actions/artifacts/{artifact_id}: 204.
func (h *Handler) deleteArtifact(w http.ResponseWriter, r *http.Request) error {
	a, err := h.artifact(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteArtifact(r.Context(), a.RepoID, a.ID); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// downloadArtifact answers GET .../artifacts/{artifact_id}/{archive_format}:
// 302 to the artifact's zip (a one-minute address); zip is the only
// format; 410 once the artifact expired.
func (h *Handler) downloadArtifact(w http.ResponseWriter, r *http.Request) error {
	a, err := h.artifact(r)
	if err != nil {
		return err
	}
	if r.PathValue("archive_format") != "zip" {
		return apierr.NotFound()
	}
	if a.Expired {
		return apierr.Gone("Artifact has expired")
	}
	return h.redirect(w, r, artifactKey(a.ID))
}
