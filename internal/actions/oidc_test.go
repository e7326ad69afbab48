package actions_test

import (
	"crypto/rsa"
	"encoding/base64"
	"encoding/json"
	"math/big"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/golang-jwt/jwt/v5"

	"forgeapi/internal/apptest"
)

// oidcWorkflow fetches the job's OIDC token with curl into DIR/NAME.json
// (job "oidc", id-token: write) and checks that a job without the
// permission has no request URL.
const oidcWorkflow = `on: push
permissions:
  id-token: write
  contents: read
jobs:
  oidc:
    runs-on: ubuntu-latest
    steps:
      - run: |
          curl -sS -f -H "Authorization: Bearer $ACTIONS_ID_TOKEN_REQUEST_TOKEN" "$ACTIONS_ID_TOKEN_REQUEST_URL&audience=sts.example" -o DIR/NAME.json
  plain:
    runs-on: ubuntu-latest
    permissions:
      contents: read
    steps:
      - run: test -z "$ACTIONS_ID_TOKEN_REQUEST_URL"
`

// TestOIDCTokenOfAJob runs a workflow whose job has id-token: write: its
// step fetches an OIDC token, which verifies against the issuer's JWKS
// (found through its discovery document) with the platform's claims and
// the default subject; after the repository customizes its subject's
// claim keys, the next run's token has the customized subject. A job
// without the permission gets no request URL (its run succeeds only
// then).
func TestOIDCTokenOfAJob(t *testing.T) {
	apptest.SkipJobsUnderRace(t)
	f := start(t)
	dir := t.TempDir()
	wf := func(name string) string { return strings.NewReplacer("DIR", dir, "NAME", name).Replace(oidcWorkflow) }
	sha := f.push(t, map[string]string{".github/workflows/oidc.yml": wf("first")})
	run := f.completedRun(t, "oidc.yml", 1)
	if run.GetConclusion() != "success" {
		logs := ""
		for _, j := range jobsByName(t, f, run.GetID(), "") {
			logs += j.GetName() + " " + j.GetConclusion() + "\n"
			if j.GetConclusion() != "skipped" {
				logs += f.jobLog(t, j.GetID())
			}
		}
		t.Fatalf("run %s:\n%s", run.GetConclusion(), logs)
	}
	claims := verifyOIDC(t, f, filepath.Join(dir, "first.json"))
	want := map[string]any{"sub": "repo:octo/hello:ref:refs/heads/main", "aud": "sts.example", "iss": f.env.URL + "/_services/token",
		"repository": "octo/hello", "repository_owner": "octo", "ref": "refs/heads/main", "sha": sha, "event_name": "push",
		"actor": "octo", "job_workflow_ref": "octo/hello/.github/workflows/oidc.yml@refs/heads/main"}
	for k, v := range want {
		if claims[k] != v {
			t.Errorf("claim %s = %v, want %v", k, claims[k], v)
		}
	}
	if claims["run_id"] != itoaTest(run.GetID()) {
		t.Errorf("run_id %v, run %d", claims["run_id"], run.GetID())
	}
	resp, body := f.env.Do("PUT", "/repos/octo/hello/actions/oidc/customization/sub", f.token,
		strings.NewReader(`{"use_default":false,"include_claim_keys":["repo","context","actor"]}`))
	if resp.StatusCode != 201 {
		t.Fatalf("customize: %d %s", resp.StatusCode, body)
	}
	resp, body = f.env.Do("GET", "/repos/octo/hello/actions/oidc/customization/sub", f.token, nil)
	if resp.StatusCode != 200 || !strings.Contains(string(body), `"include_claim_keys":["repo","context","actor"]`) {
		t.Fatalf("get customization: %d %s", resp.StatusCode, body)
	}
	f.push(t, map[string]string{".github/workflows/oidc.yml": wf("second")})
	if run := f.completedRun(t, "oidc.yml", 2); run.GetConclusion() != "success" {
		t.Fatalf("second run %s", run.GetConclusion())
	}
	claims = verifyOIDC(t, f, filepath.Join(dir, "second.json"))
	if claims["sub"] != "repo:octo/hello:ref:refs/heads/main:actor:octo" {
		t.Errorf("customized sub %v", claims["sub"])
	}
}

func itoaTest(v int64) string { return big.NewInt(v).String() }

// verifyOIDC reads the token a step wrote and verifies it against the
// issuer's keys: its claims.
func verifyOIDC(t *testing.T, f *fixture, path string) jwt.MapClaims {
	t.Helper()
	raw, err := os.ReadFile(path)
	apptest.Must(t, "read the step's token", err)
	var got struct{ Value string }
	apptest.Must(t, "decode the token answer", json.Unmarshal(raw, &got))
	var conf struct {
		Issuer  string `json:"issuer"`
		JWKSURI string `json:"jwks_uri"`
	}
	apptest.Must(t, "discovery", json.Unmarshal([]byte(get(t, f.env.URL+"/_services/token/.well-known/openid-configuration")), &conf))
	var jwks struct {
		Keys []struct{ Kid, N, E, Alg string }
	}
	apptest.Must(t, "jwks", json.Unmarshal([]byte(get(t, conf.JWKSURI)), &jwks))
	claims := jwt.MapClaims{}
	_, err = jwt.ParseWithClaims(got.Value, claims, func(tok *jwt.Token) (any, error) {
		for _, k := range jwks.Keys {
			if k.Kid == tok.Header["kid"] {
				n, _ := base64.RawURLEncoding.DecodeString(k.N)
				e, _ := base64.RawURLEncoding.DecodeString(k.E)
				return &rsa.PublicKey{N: new(big.Int).SetBytes(n), E: int(new(big.Int).SetBytes(e).Int64())}, nil
			}
		}
		return nil, jwt.ErrTokenUnverifiable
	}, jwt.WithValidMethods([]string{"RS256"}), jwt.WithIssuer(conf.Issuer), jwt.WithAudience("sts.example"))
	apptest.Must(t, "verify the OIDC token", err)
	return claims
}
