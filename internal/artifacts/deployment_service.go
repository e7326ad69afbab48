package artifacts

import (
	"context"
	"fmt"
	"net/http"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Failure is a deployment that was not recorded because its repository
// could not be used: Cause is not_found or unauthorized.
type Failure struct {
	Index      int
	Cause      string
	Deployment Deployment
}

// batch says how recordDeployments treats the deployments of one call.
type batch struct {
	// Partial leaves out the deployments whose repository cannot be used
	// instead of failing the call.
	Partial bool
	// Indexed names fields by their place in the array, for the cluster
	// call: deployments[3].service_repository.
	Indexed bool
}

// recordDeployments records the deployments in q's transaction. Each
// deployment's service repository must be a repository of the
// organization that the caller can write. When b.Partial is false, any
// deployment that fails that check fails the whole call: a 422 naming the
// repositories that are not found, or else a 403 naming the ones the
// caller cannot write. When b.Partial is true, those deployments are left
// out and returned as failures. Deployments that resolve to the same
// artifact (repository and digest) share it, with the name and version of
// the first of them unless it already exists.
func recordDeployments(ctx context.Context, q store.Q, dialect store.Dialect, p *auth.Principal, org *accounts.Account, ds []Deployment, b batch) ([]DeploymentRecord, []Failure, error) {
	resolver := newRepoResolver(ctx, q, p, org)
	var failures []Failure
	var ok []int
	repoOf := make([]*repos.Repository, len(ds))
	for i, d := range ds {
		repo, cause, err := resolver.forWrite(d.ServiceRepository)
		if err != nil {
			return nil, nil, err
		}
		if cause != "" {
			failures = append(failures, Failure{Index: i, Cause: cause, Deployment: d})
			continue
		}
		repoOf[i] = repo
		ok = append(ok, i)
	}
	if len(failures) > 0 && !b.Partial {
		return nil, nil, failuresError(failures, b.Indexed)
	}
	records, err := saveDeployments(ctx, q, dialect, org.ID, ds, repoOf, ok)
	return records, failures, err
}

// saveDeployments upserts the artifacts and deployment records of the
// deployments at the indexes, and returns the records in that order.
func saveDeployments(ctx context.Context, q store.Q, dialect store.Dialect, orgID int64, ds []Deployment, repoOf []*repos.Repository, indexes []int) ([]DeploymentRecord, error) {
	if len(indexes) == 0 {
		return nil, nil
	}
	now := store.Now()
	var arts []newArtifact
	seen := map[artifactKey]bool{}
	for _, i := range indexes {
		a := newArtifact{Repo: repoOf[i], Digest: ds[i].Digest, Name: ds[i].Name, Version: ds[i].Version}
		if !seen[a.key()] { // the first item processed names the artifact
			seen[a.key()] = true
			arts = append(arts, a)
		}
	}
	artifacts, err := ensureArtifacts(ctx, q, dialect, orgID, arts, now)
	if err != nil {
		return nil, err
	}
	rows := make([]recordRow, len(indexes))
	for n, i := range indexes {
		a := newArtifact{Repo: repoOf[i], Digest: ds[i].Digest}
		rows[n] = recordRow{Deployment: ds[i], ArtifactID: artifacts[a.key()].ID}
	}
	saved, err := upsertDeploymentRecords(ctx, q, dialect, orgID, rows, now)
	if err != nil {
		return nil, err
	}
	out := make([]DeploymentRecord, len(indexes))
	for n, i := range indexes {
		d := ds[i]
		art := artifacts[newArtifact{Repo: repoOf[i], Digest: d.Digest}.key()]
		s := saved[d.key()]
		out[n] = DeploymentRecord{ID: s.ID, ArtifactName: art.Name, ArtifactVersion: art.Version, Digest: d.Digest,
			Status: d.Status, LogicalEnvironment: d.LogicalEnvironment, PhysicalEnvironment: d.PhysicalEnvironment,
			Cluster: d.Cluster, DeploymentName: d.DeploymentName, Tags: d.Tags, RuntimeRisks: d.RuntimeRisks,
			CreatedAt: s.CreatedAt, UpdatedAt: s.UpdatedAt}
		if repoOf[i] != nil {
			out[n].RepositoryName = repoOf[i].Name
		}
	}
	return out, nil
}

// failuresError is the error of a call without partial success whose
// deployments name repositories that cannot be used. indexed names
// fields deployments[i].
func failuresError(failures []Failure, indexed bool) error {
	refusals := make([]refusal, len(failures))
	for n, f := range failures {
		refusals[n] = refusal{field: "service_repository", repo: f.Deployment.ServiceRepository, cause: f.Cause}
		if indexed {
			refusals[n].field = fmt.Sprintf("deployments[%d].service_repository", f.Index)
		}
	}
	return refusalError(resDeployment, refusals)
}

// refusal is one request field naming a repository that cannot be used.
type refusal struct {
	field, repo, cause string
}

// refusalError is a 422 naming the fields whose repositories are not
// found (or hidden from the caller) when there are any, or else a 403
// naming the ones the caller cannot write.
func refusalError(resource string, refusals []refusal) error {
	var notFound, unauthorized []apierr.FieldError
	for _, r := range refusals {
		e := apierr.FieldError{Resource: resource, Field: r.field, Value: r.repo}
		if r.cause == causeNotFound {
			e.Code, e.Message = apierr.CodeInvalid, fmt.Sprintf("repository %q was not found in the organization", r.repo)
			notFound = append(notFound, e)
			continue
		}
		e.Code, e.Message = causeUnauthorized, fmt.Sprintf("write access to repository %q is required", r.repo)
		unauthorized = append(unauthorized, e)
	}
	if len(notFound) > 0 {
		return apierr.Validation(notFound...)
	}
	e := apierr.New(http.StatusForbidden, "Artifact metadata write permission required on one or more repositories")
	e.Errors = unauthorized
	return e
}
