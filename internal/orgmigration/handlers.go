package orgmigration

import (
	"errors"
	"net/http"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// ArchiveURLTTL is the lifetime of the signed URL that GET .../archive
// redirects to.
const ArchiveURLTTL = 5 * time.Minute

// Handler serves the organization migration endpoints.
type Handler struct {
	Service *Service
}

// startBody is the body of POST /orgs/{org}/migrations.
type startBody struct {
	Repositories         []string `json:"repositories"`
	LockRepositories     bool     `json:"lock_repositories"`
	ExcludeMetadata      bool     `json:"exclude_metadata"`
	ExcludeGitData       bool     `json:"exclude_git_data"`
	ExcludeAttachments   bool     `json:"exclude_attachments"`
	ExcludeReleases      bool     `json:"exclude_releases"`
	ExcludeOwnerProjects bool     `json:"exclude_owner_projects"`
	OrgMetadataOnly      bool     `json:"org_metadata_only"`
	Exclude              []string `json:"exclude"`
}

func (b startBody) request() Request {
	exclude := b.Exclude
	if exclude == nil {
		exclude = []string{}
	}
	return Request{Repositories: b.Repositories, Exclude: exclude, Flags: Flags{
		LockRepositories: b.LockRepositories, ExcludeMetadata: b.ExcludeMetadata, ExcludeGitData: b.ExcludeGitData,
		ExcludeAttachments: b.ExcludeAttachments, ExcludeReleases: b.ExcludeReleases,
		ExcludeOwnerProjects: b.ExcludeOwnerProjects, OrgMetadataOnly: b.OrgMetadataOnly,
	}}
}

// requireRepoScope refuses a classic or OAuth token without the repo
// scope: the endpoint hands out repository contents.
func requireRepoScope(r *http.Request) error {
	p := auth.PrincipalFrom(r.Context())
	if p.ScopeBased() && !p.Token.Scopes.Grants("repo") {
		return apierr.Forbidden("This token lacks the scope this endpoint needs: organization migrations export repository contents and need the repo and admin:org scopes.")
	}
	return nil
}

func (h *Handler) start(w http.ResponseWriter, r *http.Request) error {
	if err := requireRepoScope(r); err != nil {
		return err
	}
	var body startBody
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	ctx := r.Context()
	org := accounts.OrgFrom(ctx)
	m, err := h.Service.Start(ctx, org, body.request())
	if err != nil {
		return err
	}
	j, err := newRenderer(ctx, h.Service).migration(ctx, org, m, !excludes(m.Exclude))
	if err != nil {
		return err
	}
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// excludes reports whether an exclude list drops the repositories.
func excludes(list []string) bool {
	for _, e := range list {
		if e == "repositories" {
			return true
		}
	}
	return false
}

// queryExclude reads the exclude query parameter: repeated, as
// exclude[]=, or comma separated. The only value is "repositories".
func queryExclude(r *http.Request) ([]string, error) {
	q := r.URL.Query()
	var out []string
	for _, v := range append(q["exclude"], q["exclude[]"]...) {
		for _, e := range strings.Split(v, ",") {
			if e = strings.TrimSpace(e); e == "" {
				continue
			}
			if e != "repositories" {
				return nil, apierr.Validation(apierr.FieldError{Resource: "Migration", Field: "exclude", Code: apierr.CodeInvalid,
					Message: "exclude may only contain \"repositories\"", Value: e})
			}
			out = append(out, e)
		}
	}
	return out, nil
}

func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	exclude, err := queryExclude(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	org := accounts.OrgFrom(ctx)
	list, total, err := listMigrations(ctx, h.Service.DB, org.ID, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	rd := newRenderer(ctx, h.Service)
	out := make([]migrationJSON, 0, len(list))
	for _, m := range list {
		j, err := rd.migration(ctx, org, m, !excludes(exclude))
		if err != nil {
			return err
		}
		out = append(out, j)
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// migration resolves the {migration_id} of the request's organization.
func (h *Handler) migration(r *http.Request) (*Migration, error) {
	id, err := httpapi.PathInt64(r, "migration_id")
	if err != nil {
		return nil, err
	}
	return h.Service.Get(r.Context(), accounts.OrgFrom(r.Context()), id)
}

func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	exclude, err := queryExclude(r)
	if err != nil {
		return err
	}
	m, err := h.migration(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	j, err := newRenderer(ctx, h.Service).migration(ctx, accounts.OrgFrom(ctx), m, !excludes(exclude))
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, j)
	return nil
}

func (h *Handler) downloadArchive(w http.ResponseWriter, r *http.Request) error {
	if err := requireRepoScope(r); err != nil {
		return err
	}
	m, err := h.migration(r)
	if err != nil {
		return err
	}
	url, err := h.Service.ArchiveURL(r.Context(), m, ArchiveURLTTL)
	if err != nil {
		return err
	}
	w.Header().Set("Location", url)
	w.Header().Set("Cache-Control", "private, no-store")
	w.WriteHeader(http.StatusFound)
	return nil
}

func (h *Handler) deleteArchive(w http.ResponseWriter, r *http.Request) error {
	m, err := h.migration(r)
	if err != nil {
		return err
	}
	if err := h.Service.DeleteArchive(r.Context(), m); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) unlock(w http.ResponseWriter, r *http.Request) error {
	id, err := httpapi.PathInt64(r, "migration_id")
	if err != nil {
		return err
	}
	if err := h.Service.Unlock(r.Context(), accounts.OrgFrom(r.Context()), id, r.PathValue("repo_name")); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

func (h *Handler) listRepositories(w http.ResponseWriter, r *http.Request) error {
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return err
	}
	m, err := h.migration(r)
	if err != nil {
		return err
	}
	ctx := r.Context()
	ids, total, err := migrationRepoIDs(ctx, h.Service.DB, m.ID, page.Limit(), page.Offset())
	if err != nil {
		return err
	}
	list := make([]*repos.Repository, 0, len(ids))
	for _, id := range ids {
		repo, err := repos.ByID(ctx, h.Service.DB, id)
		if errors.Is(err, store.ErrNotFound) {
			continue // deleted since the page was read
		}
		if err != nil {
			return err
		}
		list = append(list, repo)
	}
	out, err := newRenderer(ctx, h.Service).repositories(ctx, list)
	if err != nil {
		return err
	}
	httpapi.SetLinks(w, r, page, total)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}
