package e2e_test

import (
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// fixture is an organization with an owner, a member, an outsider and
// three repositories: web (public), api (private) and docs (public).
type artifactFixture struct {
	t                       *testing.T
	env                     *apptest.Env
	owner, member, outsider *accounts.Account
	org                     *accounts.Account
	web, api, docs          *repos.Repository
	token                   string // the owner's fine-grained PAT on the org, all repositories, artifact_metadata:write
}

func newArtifactFixture(t *testing.T) *artifactFixture {
	t.Helper()
	env := apptest.Start(t)
	f := &artifactFixture{t: t, env: env}
	f.owner = env.User("owner")
	f.member = env.User("member")
	f.outsider = env.User("outsider")
	f.org = env.Org("acme", f.owner, f.member)
	f.web = env.Repo(f.org, "web")
	f.api = env.Repo(f.org, "api", apptest.RepoOpts{Private: true})
	f.docs = env.Repo(f.org, "docs")
	f.token = env.FineGrainedToken(f.owner, f.org, apptest.AllRepos, "artifact_metadata:write")
	return f
}

// digest returns the sha256 digest of s as sha256:<hex>.
func digest(s string) string {
	sum := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(sum[:])
}

// response is a decoded JSON response.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// call sends a JSON request (body is marshaled unless it is a string).
func (f *artifactFixture) call(method, path, token string, body any) response {
	f.t.Helper()
	var s string
	switch b := body.(type) {
	case nil:
	case string:
		s = b
	default:
		raw, err := json.Marshal(b)
		if err != nil {
			f.t.Fatal(err)
		}
		s = string(raw)
	}
	resp, raw := f.env.DoJSON(method, path, token, s)
	return response{Status: resp.StatusCode, Header: resp.Header, Body: raw}
}

// decode unmarshals the body into v.
func (r response) decode(t *testing.T, v any) {
	t.Helper()
	if err := json.Unmarshal(r.Body, v); err != nil {
		t.Fatalf("decode %s: %v", r.Body, err)
	}
}

// want fails the test unless the status is as expected.
func (r response) want(t *testing.T, status int) response {
	t.Helper()
	if r.Status != status {
		t.Fatalf("status %d, want %d: %s", r.Status, status, r.Body)
	}
	return r
}

// record is a deployment record as the API shows it.
type record struct {
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
	Created             string            `json:"created"`
	CreatedAt           string            `json:"created_at"`
	UpdatedAt           string            `json:"updated_at"`
	AttestationID       *int64            `json:"attestation_id"`
}

type records struct {
	TotalCount        *int     `json:"total_count"`
	DeploymentRecords []record `json:"deployment_records"`
	Errors            []struct {
		Cause      string `json:"cause"`
		Index      int    `json:"index"`
		Deployment struct {
			Name              string  `json:"name"`
			DeploymentName    string  `json:"deployment_name"`
			ServiceRepository *string `json:"service_repository"`
			Status            string  `json:"status"`
		} `json:"deployment"`
	} `json:"errors"`
}

type storageRecord struct {
	ID                int64   `json:"id"`
	Name              string  `json:"name"`
	Version           *string `json:"version"`
	Digest            string  `json:"digest"`
	ArtifactURL       *string `json:"artifact_url"`
	Path              *string `json:"path"`
	RegistryURL       string  `json:"registry_url"`
	Repository        *string `json:"repository"`
	Status            string  `json:"status"`
	ServiceRepository *string `json:"service_repository"`
	CreatedAt         string  `json:"created_at"`
	UpdatedAt         string  `json:"updated_at"`
}

type storageRecords struct {
	TotalCount     *int            `json:"total_count"`
	StorageRecords []storageRecord `json:"storage_records"`
}

// apiError is an error body.
type apiError struct {
	Message string `json:"message"`
	Errors  []struct {
		Resource string `json:"resource"`
		Field    string `json:"field"`
		Code     string `json:"code"`
		Message  string `json:"message"`
	} `json:"errors"`
}

// wantFieldError fails unless the response is a 422 with an error for
// the field with the code.
func (r response) wantFieldError(t *testing.T, field, code string) {
	t.Helper()
	r.want(t, http.StatusUnprocessableEntity)
	var e apiError
	r.decode(t, &e)
	for _, fe := range e.Errors {
		if fe.Field == field && fe.Code == code {
			return
		}
	}
	t.Fatalf("no error for field %q with code %q in %s", field, code, r.Body)
}

const deploymentPath = "/orgs/acme/artifacts/metadata/deployment-record"
const storagePath = "/orgs/acme/artifacts/metadata/storage-record"

func clusterPath(cluster string) string {
	return "/orgs/acme/artifacts/metadata/deployment-record/cluster/" + cluster
}

func listDeploymentsPath(d string) string {
	return "/orgs/acme/artifacts/" + d + "/metadata/deployment-records"
}
func listStoragePath(d string) string {
	return "/orgs/acme/artifacts/" + d + "/metadata/storage-records"
}

// listDeployments returns the deployment records of the digest.
func (f *artifactFixture) listDeployments(d string) records {
	f.t.Helper()
	var out records
	f.call("GET", listDeploymentsPath(d), f.token, nil).want(f.t, http.StatusOK).decode(f.t, &out)
	return out
}

// deployment is a valid single-record body with overrides applied.
func deployment(overrides map[string]any) map[string]any {
	b := map[string]any{
		"name": "web-image", "digest": digest("web-1"), "version": "1.0.0", "status": "deployed",
		"logical_environment": "prod", "physical_environment": "eu-west", "cluster": "moda-1",
		"deployment_name": "shop-web-nginx",
	}
	for k, v := range overrides {
		if v == nil {
			delete(b, k)
			continue
		}
		b[k] = v
	}
	return b
}

func deref(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return *s
}

func names(rs []record) string {
	var out []string
	for _, r := range rs {
		out = append(out, r.DeploymentName)
	}
	return strings.Join(out, ",")
}

// basic returns the base64 credentials of HTTP Basic.
func artifactsBasic(user, password string) string {
	return base64.StdEncoding.EncodeToString([]byte(user + ":" + password))
}
