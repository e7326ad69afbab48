// Package artifacts holds an organization's artifact metadata: the
// artifacts (identified by repository and digest), their deployment
// records (upserted by organization, logical environment, physical
// environment, cluster and deployment name) and their storage records,
// with the endpoints that record and list them (spec endpoints 15-19).
//
// Only fine-grained tokens (app user, installation and fine-grained
// personal tokens) call these endpoints, with the repository permission
// contents or artifact_metadata, as the spec's authentication table says;
// classic and OAuth tokens and passwords get a 403 (the platform documents
// no classic scope for them). The token must act on the organization
// (its resource owner) and its user be a member; other callers get 404.
// A record tied to a repository of the organization needs write access to
// that repository to be written, and storage records are listed only for
// repositories the caller can read.
//
// Decisions where the spec is silent:
//   - An artifact's name and version are those of the first request (and
//     within a cluster call, the first item) that named the artifact;
//     later requests do not rename it.
//   - A deployment without a service repository records an artifact of
//     the organization that names no repository (there are no
//     attestations to take the repository from).
//   - A storage record is identified by its artifact, registry URL and
//     registry repository; a repeat updates it. When no artifact of the
//     digest can be written, the record goes on the organization's
//     artifact that names no repository.
//   - partial_success skips deployments whose repository is not found
//     (not_found) or not writable (unauthorized), as the platform's
//     errors[].cause enumerates; a body that breaks the schema is a 422
//     for the whole call either way.
//   - The platform's name github_repository is accepted for
//     service_repository; records also show created_at beside the spec's
//     created, and the name of their service repository.
package artifacts

import (
	"time"

	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Handler serves the artifact metadata endpoints.
type Handler struct {
	DB *store.DB
}

// Deployment is one validated deployment to record: the artifact it runs
// and where it runs.
type Deployment struct {
	Name                string // artifact name
	Digest              string // sha256:<64 hex>
	Version             string // "" when not given
	Status              string // deployed | decommissioned
	LogicalEnvironment  string
	PhysicalEnvironment string // "" when not given
	Cluster             string // "" when not given
	DeploymentName      string
	Tags                map[string]string
	RuntimeRisks        []string
	ServiceRepository   string // "" when not given
}

// DeploymentRecord is a stored deployment record with its artifact.
type DeploymentRecord struct {
	ID                  int64
	ArtifactName        string
	ArtifactVersion     string
	Digest              string
	Status              string
	LogicalEnvironment  string
	PhysicalEnvironment string
	Cluster             string
	DeploymentName      string
	Tags                map[string]string
	RuntimeRisks        []string
	RepositoryName      string // "" when the artifact names no repository
	AttestationID       *int64
	CreatedAt           time.Time
	UpdatedAt           time.Time
}

// Storage is one validated storage record request.
type Storage struct {
	Name              string
	Digest            string // <algorithm>:<hex>
	Version           string
	ArtifactURL       string
	Path              string
	RegistryURL       string
	Repository        string // the repository within the registry
	Status            string // active | eol | deleted
	ServiceRepository string
}

// StorageRecord is a stored storage record.
type StorageRecord struct {
	ID             int64
	Name           string
	Version        string
	Digest         string
	ArtifactURL    string
	Path           string
	RegistryURL    string
	Repository     string
	Status         string
	RepositoryID   int64  // the organization's repository the artifact belongs to; 0 for none
	RepositoryName string // its name
	CreatedAt      time.Time
	UpdatedAt      time.Time
}

// artifactKey identifies an artifact within an organization: its
// repository (0 for none) and digest.
type artifactKey struct {
	RepoID int64
	Digest string
}

// artifact is an artifact row.
type artifact struct {
	ID      int64
	RepoID  int64
	Digest  string
	Name    string
	Version string
}

// newArtifact is an artifact to create unless it exists; an existing one
// keeps its name and version.
type newArtifact struct {
	Repo    *repos.Repository // nil for none
	Digest  string
	Name    string
	Version string
}

func (n newArtifact) key() artifactKey {
	if n.Repo == nil {
		return artifactKey{Digest: n.Digest}
	}
	return artifactKey{RepoID: n.Repo.ID, Digest: n.Digest}
}
