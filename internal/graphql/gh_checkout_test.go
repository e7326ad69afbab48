package graphql_test

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestGitHubCLIPullRequestCheckout runs `gh repo clone` then `gh pr
// checkout N` in the clone. gh 2.23 drops the port from the remotes it
// reads, so the server must answer on port 443: the test serves it there
// through a validating reverse proxy on a loopback address of its own
// (127.x.y.z:443, with a certificate naming it), which needs root, as CI
// runs; the branch checked out holds the pull request's head commit,
// for a pull request of a branch of the repository and for one from a
// fork (which gh fetches as refs/pull/N/head).
func TestGitHubCLIPullRequestCheckout(t *testing.T) {
	t.Parallel()
	skipWithoutGHOn443(t)
	env := apptest.Start(t, apptest.WithTLS())
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo", "read:org")
	pushFeature(t, env, "hello", token, "-c", "http.sslCAInfo="+env.Main.CAFile())
	// bob's pull request from a fork: gh fetches refs/pull/2/head.
	bob := env.User("bob")
	bobToken := env.Token(bob, "repo")
	if resp, body := env.DoJSON("POST", "/repos/octo/hello/forks", bobToken, `{}`); resp.StatusCode != http.StatusAccepted {
		t.Fatalf("fork: %d %s", resp.StatusCode, body)
	}
	work := filepath.Join(t.TempDir(), "fork")
	forkURL := env.GitURL("bob", "hello", "bob", bobToken)
	apptest.Git(t, t.TempDir(), "-c", "http.sslCAInfo="+env.Main.CAFile(), "clone", "-q", forkURL, work)
	apptest.Git(t, work, "checkout", "-q", "-b", "fix")
	apptest.Commit(t, work, "Fix from a fork", map[string]string{"fix.txt": "fixed\n"})
	apptest.Git(t, work, "-c", "http.sslCAInfo="+env.Main.CAFile(), "push", "-q", forkURL, "fix")
	_, _, err := env.Client(bobToken).PullRequests.Create(apptest.Ctx(), "octo", "hello", github.CreatePullRequest{
		Title: github.Ptr("Fix"), Head: "bob:fix", Base: "main"})
	apptest.Must(t, "bob's pull request", err)
	gh := ghOn443(t, env)
	home := gh.home
	run := func(dir string, args ...string) string {
		t.Helper()
		out, err := gh.try(dir, token, args...)
		if err != nil {
			t.Fatalf("gh %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		return out
	}
	clone := filepath.Join(home, "hello")
	run(home, "repo", "clone", "octo/hello", clone)
	run(clone, "pr", "checkout", "1")
	if branch := apptest.Git(t, clone, "branch", "--show-current"); branch != "feature\n" {
		t.Errorf("gh pr checkout 1: on %q, want feature", branch)
	}
	if log := apptest.Git(t, clone, "log", "-1", "--format=%s"); log != "Add a feature\n" {
		t.Errorf("gh pr checkout 1: HEAD is %q", log)
	}
	run(clone, "pr", "checkout", "2")
	if log := apptest.Git(t, clone, "log", "-1", "--format=%s"); log != "Fix from a fork\n" {
		t.Errorf("gh pr checkout 2 (from bob's fork): HEAD is %q", log)
	}
}

// skipWithoutGHOn443 skips a test that runs gh against a server on
// port 443 where gh is not installed (CI fails instead) or port 443 may
// not be listened on (not root).
func skipWithoutGHOn443(t *testing.T) {
	t.Helper()
	if _, err := exec.LookPath("gh"); err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("CI lacks the gh CLI")
		}
		t.Skip("gh is not installed")
	}
	if os.Geteuid() != 0 {
		t.Skip("port 443 needs root")
	}
}

// gh443 runs gh against a server on port 443 (proxyOn443), for the
// commands gh 2.23 runs only in a clone, whose remotes it reads without
// their port.
type gh443 struct {
	host, caFile, home string
}

// ghOn443 serves env on port 443 and returns gh's runner for it, with a
// home of its own.
func ghOn443(t *testing.T, env *apptest.Env) *gh443 {
	t.Helper()
	host, caFile := proxyOn443(t, env)
	return &gh443{host: host, caFile: caFile, home: t.TempDir()}
}

// try runs gh with args in dir with the token (GH_HOST the server on
// port 443, which git trusts too) and returns what it printed (standard
// output and error) and its error.
func (g *gh443) try(dir, token string, args ...string) (string, error) {
	cmd := exec.Command("gh", args...)
	cmd.Dir = dir
	cmd.Env = []string{"HOME=" + g.home, "GH_CONFIG_DIR=" + filepath.Join(g.home, "gh"), "GH_PROMPT_DISABLED=1",
		"GH_NO_UPDATE_NOTIFIER=1", "NO_COLOR=1", "GH_HOST=" + g.host, "GH_ENTERPRISE_TOKEN=" + token,
		"SSL_CERT_FILE=" + g.caFile, "GIT_SSL_CAINFO=" + g.caFile, "PATH=" + os.Getenv("PATH")}
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// proxyOn443 serves env through a validating reverse proxy on port 443
// of a loopback address no other test uses, with a certificate of a CA
// of its own naming that address: the host (the address) and the CA's
// certificate file.
func proxyOn443(t *testing.T, env *apptest.Env) (host, caFile string) {
	t.Helper()
	var ln net.Listener
	for range 20 {
		host = fmt.Sprintf("127.%d.%d.%d", mrand.IntN(250)+1, mrand.IntN(250)+1, mrand.IntN(250)+2)
		var err error
		if ln, err = net.Listen("tcp", host+":443"); err == nil {
			break
		}
	}
	if ln == nil {
		t.Skip("no loopback address free on port 443")
	}
	cert, caPEM := certificateFor(t, net.ParseIP(host))
	caFile = filepath.Join(t.TempDir(), "ca.pem")
	apptest.Must(t, "write the CA", os.WriteFile(caFile, caPEM, 0o600))
	target, err := url.Parse(env.URL)
	apptest.Must(t, "server URL", err)
	srv := httptest.NewUnstartedServer(&httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: env.Transport(),
	})
	srv.Listener.Close()
	srv.Listener = ln
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return host, caFile
}

// certificateFor makes a CA and a server certificate it signs for ip:
// the server's certificate and the CA's in PEM.
func certificateFor(t *testing.T, ip net.IP) (tls.Certificate, []byte) {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	apptest.Must(t, "CA key", err)
	now := time.Now()
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test CA"}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true, KeyUsage: x509.KeyUsageCertSign}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	apptest.Must(t, "CA certificate", err)
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	apptest.Must(t, "server key", err)
	leaf := &x509.Certificate{SerialNumber: big.NewInt(2), Subject: pkix.Name{CommonName: ip.String()}, NotBefore: now.Add(-time.Hour),
		NotAfter: now.Add(time.Hour), IPAddresses: []net.IP{ip}, KeyUsage: x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, leaf, ca, &key.PublicKey, caKey)
	apptest.Must(t, "server certificate", err)
	return tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})
}
