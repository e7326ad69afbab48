package artifacts

import (
	"fmt"

	"forgeapi/internal/apierr"
)

// deploymentFields are the fields a deployment has in both the single
// and the cluster request. Pointers tell absent from empty.
type deploymentFields struct {
	Name              *string           `json:"name"`
	Digest            *string           `json:"digest"`
	Version           *string           `json:"version"`
	Status            *string           `json:"status"`
	DeploymentName    *string           `json:"deployment_name"`
	Tags              map[string]string `json:"tags"`
	RuntimeRisks      []string          `json:"runtime_risks"`
	ServiceRepository *string           `json:"service_repository"`
	// GithubRepository is the platform's name of service_repository,
	// accepted so that the platform's clients work unchanged.
	GithubRepository *string `json:"github_repository"`
}

// deploymentRequest is the body of POST .../deployment-record.
type deploymentRequest struct {
	deploymentFields
	LogicalEnvironment  *string `json:"logical_environment"`
	PhysicalEnvironment *string `json:"physical_environment"`
	Cluster             *string `json:"cluster"`
	ReturnRecords       *bool   `json:"return_records"`
}

// clusterRequest is the body of POST .../deployment-record/cluster/{cluster}.
type clusterRequest struct {
	LogicalEnvironment  *string             `json:"logical_environment"`
	PhysicalEnvironment *string             `json:"physical_environment"`
	Deployments         *[]deploymentFields `json:"deployments"`
	PartialSuccess      bool                `json:"partial_success"`
	ReturnRecords       *bool               `json:"return_records"`
}

// storageRequest is the body of POST .../storage-record.
type storageRequest struct {
	Name              *string `json:"name"`
	Digest            *string `json:"digest"`
	Version           *string `json:"version"`
	ArtifactURL       *string `json:"artifact_url"`
	Path              *string `json:"path"`
	RegistryURL       *string `json:"registry_url"`
	Repository        *string `json:"repository"`
	Status            *string `json:"status"`
	ServiceRepository *string `json:"service_repository"`
	GithubRepository  *string `json:"github_repository"`
	ReturnRecords     *bool   `json:"return_records"`
}

// returnRecords reads return_records, which defaults to true.
func returnRecords(v *bool) bool { return v == nil || *v }

// toDeployment validates the single request.
func (b deploymentRequest) toDeployment() (Deployment, error) {
	var errs apierr.Fields
	c := checker{resource: resDeployment, errs: &errs}
	d := b.deploymentFields.toDeployment(c, true, 1)
	d.LogicalEnvironment = c.required("logical_environment", b.LogicalEnvironment, maxEnvironmentLen)
	d.PhysicalEnvironment = c.optional("physical_environment", b.PhysicalEnvironment, 0, maxEnvironmentLen)
	d.Cluster = c.optional("cluster", b.Cluster, 0, maxEnvironmentLen)
	return d, errs.Err()
}

// toDeployment validates the fields of one deployment. statusRequired
// is the single request's rule; in a cluster request an absent or empty
// status means deployed. versionMin is the least length of a version.
func (f deploymentFields) toDeployment(c checker, statusRequired bool, versionMin int) Deployment {
	d := Deployment{
		Name:           c.required("name", f.Name, maxNameLen),
		Version:        c.optional("version", f.Version, versionMin, maxVersionLen),
		DeploymentName: c.required("deployment_name", f.DeploymentName, maxDeploymentNameLen),
	}
	if f.Digest == nil {
		c.add("digest", apierr.CodeMissingField, "digest is required")
	} else {
		d.Digest = *f.Digest
		c.match("digest", d.Digest, validSHA256Digest(d.Digest), "sha256: followed by 64 lowercase hexadecimal digits")
	}
	switch {
	case f.Status == nil && statusRequired:
		c.add("status", apierr.CodeMissingField, "status is required")
	case f.Status == nil || (*f.Status == "" && !statusRequired):
		d.Status = statusDeployed
	default:
		d.Status = *f.Status
		c.oneOf("status", d.Status, statusDeployed, statusDecommissioned)
	}
	d.Tags = c.tags(f.Tags)
	d.RuntimeRisks = c.risks(f.RuntimeRisks)
	d.ServiceRepository = c.serviceRepository(f.ServiceRepository, f.GithubRepository)
	return d
}

// toDeployments validates the cluster request: the environments, at most
// 1000 deployments, each valid, with deployment names unique within the
// array. The cluster comes from the path.
func (b clusterRequest) toDeployments(cluster string) ([]Deployment, error) {
	var errs apierr.Fields
	c := checker{resource: resDeployment, errs: &errs}
	c.length("cluster", cluster, 1, maxEnvironmentLen)
	c.match("cluster", cluster, cluster == "" || clusterName.MatchString(cluster), "letters, digits, '.', '-' and '_'")
	logical := c.required("logical_environment", b.LogicalEnvironment, maxEnvironmentLen)
	physical := c.optional("physical_environment", b.PhysicalEnvironment, 0, maxEnvironmentLen)
	if b.Deployments == nil {
		c.add("deployments", apierr.CodeMissingField, "deployments is required")
		return nil, errs.Err()
	}
	items := *b.Deployments
	if len(items) > maxClusterDeployments {
		c.add("deployments", apierr.CodeInvalid, "deployments may have at most %d items, not %d", maxClusterDeployments, len(items))
		return nil, errs.Err()
	}
	out := make([]Deployment, len(items))
	firstIndex := make(map[string]int, len(items))
	for i, item := range items {
		ic := checker{resource: resDeployment, prefix: fmt.Sprintf("deployments[%d].", i), errs: &errs}
		d := item.toDeployment(ic, false, 0)
		d.LogicalEnvironment, d.PhysicalEnvironment, d.Cluster = logical, physical, cluster
		if first, dup := firstIndex[d.DeploymentName]; dup && item.DeploymentName != nil {
			ic.add("deployment_name", apierr.CodeInvalid,
				"deployment_name %q is already used by deployments[%d]; it must be unique within deployments", d.DeploymentName, first)
		} else if item.DeploymentName != nil {
			firstIndex[d.DeploymentName] = i
		}
		out[i] = d
	}
	return out, errs.Err()
}

// toStorage validates the storage record request.
func (b storageRequest) toStorage() (Storage, error) {
	var errs apierr.Fields
	c := checker{resource: resStorage, errs: &errs}
	s := Storage{
		Name:        c.required("name", b.Name, maxNameLen),
		Version:     c.optional("version", b.Version, 1, maxVersionLen),
		ArtifactURL: c.optional("artifact_url", b.ArtifactURL, 0, maxArtifactURLLen),
		Path:        c.optional("path", b.Path, 0, maxPathLen),
		RegistryURL: c.required("registry_url", b.RegistryURL, maxRegistryURLLen),
		Repository:  c.optional("repository", b.Repository, 0, maxRegistryRepoLen),
		Status:      statusActive,
	}
	if b.Digest == nil {
		c.add("digest", apierr.CodeMissingField, "digest is required")
	} else {
		s.Digest = *b.Digest
		c.match("digest", s.Digest, validDigest(s.Digest), "<algorithm>:<lowercase hexadecimal digest>, such as sha256: and 64 hexadecimal digits")
	}
	c.httpsURL("registry_url", s.RegistryURL)
	c.httpsURL("artifact_url", s.ArtifactURL)
	if b.Status != nil {
		s.Status = *b.Status
		c.oneOf("status", s.Status, statusActive, statusEOL, statusDeleted)
	}
	s.ServiceRepository = c.serviceRepository(b.ServiceRepository, b.GithubRepository)
	return s, errs.Err()
}
