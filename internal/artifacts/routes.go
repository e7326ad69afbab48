package artifacts

import (
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
)

// MaxClusterBody is the body limit of a cluster batch: 4 MiB. The largest
// valid batch (1000 deployments, every field and tag at its limit, ASCII
// text) is 3.07 MB as compact JSON and 3.25 MB indented; other routes
// keep httpapi.DefaultMaxBody.
const MaxClusterBody = 4 << 20

// Routes is the artifact metadata area's route table (spec endpoints
// 15-19). Callers need a fine-grained token whose resource owner is the
// organization, held by a member of it (or an installation on it), with
// contents or artifact_metadata: write to record, read to list.
func (h *Handler) Routes() []httpapi.Route {
	write := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, FineGrainedOnly: true,
		Permissions: auth.Perm("contents:write", "artifact_metadata:write"), TokenTypes: auth.AllTokenTypes,
		Extra: "Records tied to a repository also need write access to that repository."}
	read := auth.Rule{Target: auth.TargetOrg, Role: auth.RoleRead, FineGrainedOnly: true,
		Permissions: auth.Perm("contents:read", "artifact_metadata:read"), TokenTypes: auth.AllTokenTypes}
	readStorage := read
	readStorage.Extra = "Lists only the records of repositories the caller can read."
	return []httpapi.Route{
		{Method: "POST", Pattern: "/orgs/{org}/artifacts/metadata/deployment-record", Handle: h.createDeploymentRecord, Auth: write},
		{Method: "POST", Pattern: "/orgs/{org}/artifacts/metadata/deployment-record/cluster/{cluster}", Handle: h.setClusterDeploymentRecords, Auth: write,
			MaxBody: MaxClusterBody},
		{Method: "POST", Pattern: "/orgs/{org}/artifacts/metadata/storage-record", Handle: h.createStorageRecord, Auth: write},
		{Method: "GET", Pattern: "/orgs/{org}/artifacts/{subject_digest}/metadata/deployment-records", Handle: h.listDeploymentRecords, Auth: read},
		{Method: "GET", Pattern: "/orgs/{org}/artifacts/{subject_digest}/metadata/storage-records", Handle: h.listStorageRecords, Auth: readStorage},
	}
}
