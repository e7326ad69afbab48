package tlsca_test

import (
	"bytes"
	"crypto/x509"
	"path/filepath"
	"testing"
	"time"

	"forgeapi/internal/tlsca"
)

// TestSelfSignedNamesBaseURLHost: the --tls self-signed server
// certificate names the host of --base-url (a DNS name or an IP address)
// beside the listen host, localhost and loopback; a later start with
// another base URL host makes a new certificate of the same CA, and one
// with the same hosts reuses it.
func TestSelfSignedNamesBaseURLHost(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	leaf := func(base string) (*x509.Certificate, []byte) {
		t.Helper()
		cfg, _, err := tlsca.ServerConfig(tlsca.Source{Mode: tlsca.SelfSigned, Dir: filepath.Join(dir, "tls"), ListenHost: "127.0.0.1", BaseURL: base}, time.Now())
		if err != nil {
			t.Fatalf("ServerConfig(%s): %v", base, err)
		}
		der := cfg.Certificates[0].Certificate[0]
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		return cert, der
	}
	first, firstDER := leaf("https://forge.example/api/v3")
	for _, name := range []string{"forge.example", "localhost", "127.0.0.1", "::1"} {
		if err := first.VerifyHostname(name); err != nil {
			t.Errorf("DNS base URL host: %v", err)
		}
	}
	if _, again := leaf("https://forge.example:8443/api/v3"); !bytes.Equal(again, firstDER) {
		t.Error("the same hosts made a new certificate")
	}
	second, _ := leaf("https://[2001:db8::7]:8443")
	for _, name := range []string{"2001:db8::7", "127.0.0.1"} {
		if err := second.VerifyHostname(name); err != nil {
			t.Errorf("IP base URL host: %v", err)
		}
	}
	if !bytes.Equal(first.RawIssuer, second.RawIssuer) || first.AuthorityKeyId == nil || !bytes.Equal(first.AuthorityKeyId, second.AuthorityKeyId) {
		t.Error("a new base URL host made a new CA")
	}
}
