package e2e_test

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"slices"
	"testing"
	"time"

	"forgeapi/internal/apptest"
)

// TestOctokitSemanticReleaseStyle publishes a release as semantic-release
// does, with octokit.js (testdata/node/octokit-release.mjs) through the
// validating proxy: a draft, an asset uploaded at upload_url, published,
// read back, the asset's bytes downloaded through the asset API.
func TestOctokitSemanticReleaseStyle(t *testing.T) {
	t.Parallel()
	dir := apptest.NodeModules(t, "@octokit/rest")
	env := apptest.Start(t)
	_, _, token := releaseProject(t, env)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "node", "octokit-release.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "FORGEAPI_URL="+env.ValidatingProxy()+"/api/v3", "FORGEAPI_TOKEN="+token,
		"OWNER=octo", "REPO=hello", "TAG=v1.0.0")
	cmd.Stderr = os.Stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("node octokit-release.mjs: %v\n%s", err, out)
	}
	var s struct {
		Error     string `json:"error"`
		Draft     bool   `json:"draft"`
		Published bool   `json:"published"`
		Latest    string `json:"latest"`
		ByTag     bool   `json:"byTag"`
		Asset     struct {
			Name, Label, ContentType, Digest string
			Size                             int64
		} `json:"asset"`
		Assets      []string `json:"assets"`
		Downloaded  string   `json:"downloaded"`
		UploadedSHA string   `json:"uploadedSHA"`
	}
	if err := json.Unmarshal(out, &s); err != nil {
		t.Fatalf("summary %q: %v", out, err)
	}
	if s.Error != "" {
		t.Fatalf("octokit: %s", s.Error)
	}
	if !s.Draft || !s.Published || s.Latest != "v1.0.0" || !s.ByTag || !slices.Equal(s.Assets, []string{"dist.tgz"}) {
		t.Errorf("summary %s", out)
	}
	if a := s.Asset; a.Name != "dist.tgz" || a.Label != "Distribution" || a.Size != 300000 || a.ContentType != "application/gzip" ||
		a.Digest != "sha256:"+s.UploadedSHA {
		t.Errorf("asset %+v", a)
	}
	if s.Downloaded != s.UploadedSHA {
		t.Errorf("downloaded sha256 %s, uploaded %s", s.Downloaded, s.UploadedSHA)
	}
}
