package artifacts

import "forgeapi/internal/wire"

// deploymentRecordJSON is a deployment record as the API shows it. The
// creation time is `created`, as the spec names it, and also
// `created_at`, as the platform's schema (and its clients) name it.
type deploymentRecordJSON struct {
	ID                  int64             `json:"id"`
	Name                string            `json:"name"`
	Version             *string           `json:"version"`
	Digest              string            `json:"digest"`
	Status              string            `json:"status"`
	LogicalEnvironment  string            `json:"logical_environment"`
	PhysicalEnvironment string            `json:"physical_environment"`
	Cluster             string            `json:"cluster"`
	DeploymentName      string            `json:"deployment_name"`
	Tags                map[string]string `json:"tags"`
	RuntimeRisks        []string          `json:"runtime_risks"`
	ServiceRepository   *string           `json:"service_repository"`
	Created             wire.Time         `json:"created"`
	CreatedAt           wire.Time         `json:"created_at"`
	UpdatedAt           wire.Time         `json:"updated_at"`
	AttestationID       *int64            `json:"attestation_id"`
}

// deploymentRecordsJSON is the body of 15, 16 and 18; Errors is set
// only on a 207 of 16.
type deploymentRecordsJSON struct {
	TotalCount        int                    `json:"total_count"`
	DeploymentRecords []deploymentRecordJSON `json:"deployment_records"`
	Errors            []failureJSON          `json:"errors,omitempty"`
}

// failureJSON is one entry of a 207's errors: the cause and the
// deployment as it was sent.
type failureJSON struct {
	Cause      string         `json:"cause"`
	Index      int            `json:"index"`
	Deployment deploymentJSON `json:"deployment"`
}

type deploymentJSON struct {
	Name              string            `json:"name"`
	Digest            string            `json:"digest"`
	DeploymentName    string            `json:"deployment_name"`
	Version           *string           `json:"version"`
	Status            string            `json:"status"`
	ServiceRepository *string           `json:"service_repository"`
	Tags              map[string]string `json:"tags"`
	RuntimeRisks      []string          `json:"runtime_risks"`
}

// storageRecordJSON is a storage record as the API shows it.
type storageRecordJSON struct {
	ID                int64     `json:"id"`
	Name              string    `json:"name"`
	Version           *string   `json:"version"`
	Digest            string    `json:"digest"`
	ArtifactURL       *string   `json:"artifact_url,omitempty"`
	Path              *string   `json:"path"`
	RegistryURL       string    `json:"registry_url"`
	Repository        *string   `json:"repository,omitempty"`
	Status            string    `json:"status"`
	ServiceRepository *string   `json:"service_repository"`
	CreatedAt         wire.Time `json:"created_at"`
	UpdatedAt         wire.Time `json:"updated_at"`
}

// storageRecordsCreatedJSON is the body of 17.
type storageRecordsCreatedJSON struct {
	TotalCount     int                 `json:"total_count"`
	StorageRecords []storageRecordJSON `json:"storage_records"`
}

// storageRecordsJSON is the body of 19: the list only, as the spec shows it.
type storageRecordsJSON struct {
	StorageRecords []storageRecordJSON `json:"storage_records"`
}

// optional renders "" as null.
func optional(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func toDeploymentRecordJSON(d DeploymentRecord) deploymentRecordJSON {
	return deploymentRecordJSON{
		ID: d.ID, Name: d.ArtifactName, Version: optional(d.ArtifactVersion), Digest: d.Digest, Status: d.Status,
		LogicalEnvironment: d.LogicalEnvironment, PhysicalEnvironment: d.PhysicalEnvironment, Cluster: d.Cluster,
		DeploymentName: d.DeploymentName, Tags: nonNilTags(d.Tags), RuntimeRisks: nonNilRisks(d.RuntimeRisks),
		ServiceRepository: optional(d.RepositoryName), Created: wire.T(d.CreatedAt), CreatedAt: wire.T(d.CreatedAt),
		UpdatedAt: wire.T(d.UpdatedAt), AttestationID: d.AttestationID,
	}
}

// toDeploymentRecordsJSON renders records; with returnRecords false the
// list is empty and only the count tells how many were written.
func toDeploymentRecordsJSON(records []DeploymentRecord, returnRecords bool) deploymentRecordsJSON {
	out := deploymentRecordsJSON{TotalCount: len(records), DeploymentRecords: []deploymentRecordJSON{}}
	if !returnRecords {
		return out
	}
	for _, d := range records {
		out.DeploymentRecords = append(out.DeploymentRecords, toDeploymentRecordJSON(d))
	}
	return out
}

func toFailureJSON(f Failure) failureJSON {
	d := f.Deployment
	return failureJSON{Cause: f.Cause, Index: f.Index, Deployment: deploymentJSON{
		Name: d.Name, Digest: d.Digest, DeploymentName: d.DeploymentName, Version: optional(d.Version), Status: d.Status,
		ServiceRepository: optional(d.ServiceRepository), Tags: nonNilTags(d.Tags), RuntimeRisks: nonNilRisks(d.RuntimeRisks),
	}}
}

func toStorageRecordJSON(s StorageRecord) storageRecordJSON {
	return storageRecordJSON{
		ID: s.ID, Name: s.Name, Version: optional(s.Version), Digest: s.Digest, ArtifactURL: optional(s.ArtifactURL),
		Path: optional(s.Path), RegistryURL: s.RegistryURL, Repository: optional(s.Repository), Status: s.Status,
		ServiceRepository: optional(s.RepositoryName), CreatedAt: wire.T(s.CreatedAt), UpdatedAt: wire.T(s.UpdatedAt),
	}
}

func toStorageRecordsJSON(records []StorageRecord) []storageRecordJSON {
	out := make([]storageRecordJSON, 0, len(records))
	for _, s := range records {
		out = append(out, toStorageRecordJSON(s))
	}
	return out
}

func nonNilTags(t map[string]string) map[string]string {
	if t == nil {
		return map[string]string{}
	}
	return t
}

func nonNilRisks(r []string) []string {
	if r == nil {
		return []string{}
	}
	return r
}
