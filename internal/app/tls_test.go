package app_test

import (
	"bytes"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"io"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/testwait"
	"forgeapi/internal/webhooks"
)

// TestSelfSignedTLS: --tls self-signed serves the API over HTTPS with
// HTTP/2 and git over HTTPS, with a local CA that a restart keeps.
func TestSelfSignedTLS(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS())
	if !strings.HasPrefix(env.URL, "https://") || env.Main.CAFile() != filepath.Join(env.DataDir, "tls", "ca.pem") {
		t.Fatalf("URL %s, CA file %q", env.URL, env.Main.CAFile())
	}
	octo := env.User("octo")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	resp, body := env.Do("GET", "/api/v3/repos/octo/hello", token, nil)
	if resp.StatusCode != http.StatusOK || resp.Proto != "HTTP/2.0" || !strings.Contains(string(body), `"url":"`+env.URL+`/repos/octo/hello"`) {
		t.Fatalf("GET over TLS: %d %s %.200s", resp.StatusCode, resp.Proto, body)
	}
	// A day's policy for a local CA's certificate, on errors too.
	for _, path := range []string{"/api/v3/repos/octo/hello", "/api/v3/repos/octo/nope"} {
		if resp, _ := env.Do("GET", path, token, nil); resp.Header.Get("Strict-Transport-Security") != "max-age=86400" {
			t.Errorf("GET %s over TLS: %d, Strict-Transport-Security %q, want max-age=86400", path, resp.StatusCode,
				resp.Header.Get("Strict-Transport-Security"))
		}
	}
	work := apptest.WorkTree(t, map[string]string{"README.md": "hi\n"})
	apptest.Git(t, work, "-c", "http.sslCAInfo="+env.Main.CAFile(), "push", "-q", env.GitURL("octo", "hello", "octo", token), "HEAD:refs/heads/main")
	apptest.Git(t, t.TempDir(), "-c", "http.sslCAInfo="+env.Main.CAFile(), "clone", "-q", env.GitURL("octo", "hello", "octo", token), "c")
	if _, err := apptest.TryGit(t, t.TempDir(), "clone", "-q", env.GitURL("octo", "hello", "octo", token), "c"); err == nil {
		t.Fatal("git trusted the server without its CA")
	}

	// A restart on the same data keeps the CA.
	ca, err := os.ReadFile(env.Main.CAFile())
	apptest.Must(t, "read CA", err)
	env.Stop()
	cfg := env.Config
	cfg.Addr = "127.0.0.1:0"
	again := apptest.StartConfig(t, cfg)
	ca2, err := os.ReadFile(again.Main.CAFile())
	apptest.Must(t, "read CA", err)
	if !bytes.Equal(ca, ca2) {
		t.Fatal("a restart made a new CA")
	}
	if resp, _ := again.Do("GET", "/repos/octo/hello", token, nil); resp.StatusCode != http.StatusOK {
		t.Fatalf("after the restart: %d", resp.StatusCode)
	}
}

// tlsReceiver is an HTTPS webhook receiver with a certificate of its own
// CA, written to a PEM file; it reports each delivery's event.
func tlsReceiver(t *testing.T) (url, caFile string, got chan string) {
	t.Helper()
	got = make(chan string, 10)
	srv := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		apptest.CheckWebhook(t, r.Header.Get("X-GitHub-Event"), body)
		got <- r.Header.Get("X-GitHub-Event")
	}))
	t.Cleanup(srv.Close)
	caFile = filepath.Join(t.TempDir(), "receiver-ca.pem")
	pemBytes := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	apptest.Must(t, "write receiver CA", os.WriteFile(caFile, pemBytes, 0o644))
	return srv.URL, caFile, got
}

// TestWebhookReceiverCertificates: deliveries to an HTTPS receiver verify
// its certificate (refused without its CA, delivered with
// --webhook-ca-file), unless the hook says insecure_ssl "1".
func TestWebhookReceiverCertificates(t *testing.T) {
	t.Parallel()
	url, caFile, got := tlsReceiver(t)
	for _, c := range []struct {
		name     string
		caFile   string
		insecure string
		wantPing bool
	}{
		{"verified without the CA", "", "0", false},
		{"verified with --webhook-ca-file", caFile, "0", true},
		{"insecure_ssl 1 without the CA", "", "1", true},
	} {
		env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback", CAFile: c.caFile}))
		octo := env.User("octo")
		env.Repo(octo, "hello")
		client := env.Client(env.Token(octo, "repo", "admin:repo_hook"))
		hook, _, err := client.Repositories.CreateHook(apptest.Ctx(), "octo", "hello", &github.Hook{Events: []string{"push"},
			Config: &github.HookConfig{URL: github.Ptr(url), ContentType: github.Ptr("json"), InsecureSSL: github.Ptr(c.insecure)}})
		apptest.Must(t, c.name+": hook", err)
		var delivery *github.HookDelivery
		testwait.Until(t, c.name+": the ping's attempt", func() bool {
			list, _, err := client.Repositories.ListHookDeliveries(apptest.Ctx(), "octo", "hello", hook.GetID(), nil)
			apptest.Must(t, "deliveries", err)
			if len(list) == 1 && list[0].GetStatus() != "pending" {
				delivery = list[0]
			}
			return delivery != nil
		})
		delivered := delivery.GetStatusCode() == http.StatusOK
		if delivered != c.wantPing {
			t.Errorf("%s: delivery %q %d, want delivered %v", c.name, delivery.GetStatus(), delivery.GetStatusCode(), c.wantPing)
		}
		if delivered {
			if e := <-got; e != "ping" {
				t.Errorf("%s: received %q", c.name, e)
			}
		}
	}
}

// TestGitHubCLI runs the gh CLI against a server on --tls self-signed, as
// a user sets it up for a self-managed server: GH_HOST, GH_ENTERPRISE_TOKEN
// and SSL_CERT_FILE. It needs gh (Debian package gh; CI installs it).
func TestGitHubCLI(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithTLS(), apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	octo := env.User("octo")
	for _, name := range []string{"hello", "r1", "r2", "r3"} {
		env.Repo(octo, name)
	}
	token := env.Token(octo, "repo", "admin:repo_hook", "read:org")
	got := make(chan string, 10)
	receiver := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		apptest.CheckWebhook(t, r.Header.Get("X-GitHub-Event"), body)
		got <- r.Header.Get("X-GitHub-Event")
	}))
	t.Cleanup(receiver.Close)
	gh := apptest.GH(t, env, token, false)
	run := func(args ...string) string { t.Helper(); return gh.Run(t, args...) }
	if out := run("auth", "status"); !strings.Contains(out, "Logged in to") || !strings.Contains(out, "as octo") {
		t.Fatalf("gh auth status:\n%s", out)
	}
	if out := run("api", "repos/octo/hello", "--jq", ".full_name"); strings.TrimSpace(out) != "octo/hello" {
		t.Fatalf("gh api repos/octo/hello: %q", out)
	}
	if out := run("api", "--paginate", "user/repos?per_page=2", "--jq", ".[].full_name"); strings.Fields(out)[3] != "octo/r3" || len(strings.Fields(out)) != 4 {
		t.Fatalf("gh api --paginate: %q", out)
	}
	out := run("api", "-X", "POST", "repos/octo/hello/hooks", "-f", "config[url]="+receiver.URL, "-f", "config[content_type]=json",
		"-f", "events[]=push", "--jq", ".config.url")
	if strings.TrimSpace(out) != receiver.URL {
		t.Fatalf("gh api -X POST hooks: %q", out)
	}
	select {
	case e := <-got:
		if e != "ping" {
			t.Fatalf("the hook gh made received %q", e)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the hook gh made got no ping")
	}
}

// TestTLSCertificateFiles: --tls-cert FILE --tls-key FILE serve the API
// over HTTPS with that certificate: a client that trusts it (and nothing
// else) verifies the server, and one that does not refuses it.
func TestTLSCertificateFiles(t *testing.T) {
	t.Parallel()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	apptest.Must(t, "key", err)
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "test server"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		KeyUsage:    x509.KeyUsageDigitalSignature | x509.KeyUsageCertSign,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		IsCA:        true, BasicConstraintsValid: true,
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	apptest.Must(t, "certificate", err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	apptest.Must(t, "marshal key", err)
	dir := t.TempDir()
	certFile, keyFile := filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem")
	apptest.Must(t, "write certificate", os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o644))
	apptest.Must(t, "write key", os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))

	env := apptest.Start(t, func(c *app.Config) { c.TLSCertFile, c.TLSKeyFile = certFile, keyFile })
	if !strings.HasPrefix(env.URL, "https://") || env.Main.CAFile() != "" {
		t.Fatalf("URL %s, CA file %q", env.URL, env.Main.CAFile())
	}
	octo := env.User("octo")
	env.Repo(octo, "hello")
	client := &http.Client{Transport: apptest.Transport(t, apptest.TrustingTransport(t, certFile))}
	req, err := http.NewRequest("GET", env.URL+"/api/v3/repos/octo/hello", nil)
	apptest.Must(t, "request", err)
	req.Header.Set("Authorization", "Bearer "+env.Token(octo, "repo"))
	resp, err := client.Do(req)
	apptest.Must(t, "GET over HTTPS", err)
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	apptest.Must(t, "read", err)
	if resp.StatusCode != http.StatusOK || resp.TLS == nil || !bytes.Equal(resp.TLS.PeerCertificates[0].Raw, der) ||
		!strings.Contains(string(body), `"full_name":"octo/hello"`) {
		t.Fatalf("GET over HTTPS: %d %.200s", resp.StatusCode, body)
	}
	if hsts := resp.Header.Get("Strict-Transport-Security"); hsts != "max-age=31536000" {
		t.Errorf("Strict-Transport-Security %q over HTTPS with the operator's certificate, want max-age=31536000", hsts)
	}
	if _, err := http.Get(env.URL + "/api/v3/"); err == nil {
		t.Fatal("a client that does not trust the certificate was served")
	}
}

// TestNoStrictTransportSecurityOverHTTP: plain HTTP answers carry no
// Strict-Transport-Security (a browser ignores it there, and a proxy
// that terminates TLS in front of forgeapi sets its own).
func TestNoStrictTransportSecurityOverHTTP(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	for _, path := range []string{"/meta", "/nope"} {
		if resp, _ := env.Do("GET", path, "", nil); resp.Header.Get("Strict-Transport-Security") != "" {
			t.Errorf("GET %s over plain HTTP: Strict-Transport-Security %q", path, resp.Header.Get("Strict-Transport-Security"))
		}
	}
}
