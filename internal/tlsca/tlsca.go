// Package tlsca makes the TLS configuration forgeapi serves HTTPS with:
// the operator's certificate and key files, or a certificate of a local
// certificate authority kept in a directory (DATA/tls for --tls
// self-signed), made on the first start and reused after.
package tlsca

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"time"
)

// SelfSigned is the value of --tls that makes forgeapi serve HTTPS
// with a certificate of its own local CA.
const SelfSigned = "self-signed"

// The files of the self-signed TLS set-up, in Source.Dir.
const (
	caFileName      = "ca.pem"
	caKeyFileName   = "ca-key.pem"
	certFileName    = "server.pem"
	certKeyFileName = "server-key.pem"
)

// Source names what the server's certificate comes from.
type Source struct {
	// Mode is "" (the certificate files, if any) or SelfSigned.
	Mode string
	// CertFile and KeyFile are a PEM certificate (chain) and its key,
	// both or neither.
	CertFile, KeyFile string
	// Dir holds the local CA and its server certificate (SelfSigned).
	Dir string
	// ListenHost and BaseURL name the hosts the self-signed server
	// certificate is for, beside localhost and loopback (see certHosts).
	ListenHost, BaseURL string
}

// ServerConfig returns the TLS configuration of the API and git listener
// (nil for plain HTTP: no Mode, no files), and for SelfSigned the CA file
// that clients should trust. With cert and key files those are served;
// with SelfSigned, a CA and a server certificate for the listen host, the
// host of BaseURL, localhost, 127.0.0.1 and ::1 are made in Dir on the
// first start and reused after (the server certificate is made again
// when it does not name the listen host and the base URL's host, or
// expires within 30 days of now). Errors name the command line's flags.
func ServerConfig(src Source, now time.Time) (*tls.Config, string, error) {
	var cert tls.Certificate
	var caFile string
	var err error
	switch {
	case src.CertFile != "" || src.KeyFile != "":
		if src.CertFile == "" || src.KeyFile == "" {
			return nil, "", errors.New("--tls-cert and --tls-key go together")
		}
		cert, err = tls.LoadX509KeyPair(src.CertFile, src.KeyFile)
	case src.Mode == SelfSigned:
		caFile = filepath.Join(src.Dir, caFileName)
		cert, err = selfSigned(src.Dir, certHosts(src.ListenHost, src.BaseURL), now)
	case src.Mode == "":
		return nil, "", nil
	default:
		return nil, "", fmt.Errorf("--tls must be %s (or use --tls-cert and --tls-key), not %q", SelfSigned, src.Mode)
	}
	if err != nil {
		return nil, "", fmt.Errorf("TLS: %w", err)
	}
	return &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12,
		NextProtos: []string{"h2", "http/1.1"}}, caFile, nil
}

// certHosts returns the host names (DNS names or IP addresses) that the
// self-signed server certificate names beside localhost and loopback:
// the listen host and the host of the public base URL, the one clients
// connect to (an empty or unspecified listen address names none, nor
// does a base URL that does not parse).
func certHosts(listenHost, baseURL string) []string {
	var hosts []string
	add := func(h string) {
		if ip := net.ParseIP(h); h == "" || ip != nil && ip.IsUnspecified() || slices.Contains(hosts, h) {
			return
		}
		hosts = append(hosts, h)
	}
	add(listenHost)
	if u, err := url.Parse(baseURL); err == nil {
		add(u.Hostname())
	}
	return hosts
}

// selfSigned returns the server certificate of the local CA in dir for
// localhost, 127.0.0.1, ::1 and hosts (see certHosts), making the CA and
// the certificate as needed.
func selfSigned(dir string, hosts []string, now time.Time) (tls.Certificate, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return tls.Certificate{}, err
	}
	ca, caKey, err := loadOrCreateCA(dir, now)
	if err != nil {
		return tls.Certificate{}, err
	}
	certFile, keyFile := filepath.Join(dir, certFileName), filepath.Join(dir, certKeyFileName)
	if cert, err := tls.LoadX509KeyPair(certFile, keyFile); err == nil && certServes(cert, ca, hosts, now) {
		return cert, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "forgeapi server"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0),
		KeyUsage:    x509.KeyUsageDigitalSignature,
		ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:    []string{"localhost"}, IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	for _, host := range hosts {
		if ip := net.ParseIP(host); ip != nil {
			if !slices.ContainsFunc(tmpl.IPAddresses, ip.Equal) {
				tmpl.IPAddresses = append(tmpl.IPAddresses, ip)
			}
		} else if !slices.Contains(tmpl.DNSNames, host) {
			tmpl.DNSNames = append(tmpl.DNSNames, host)
		}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := writePEM(certFile, "CERTIFICATE", der, 0o644); err != nil {
		return tls.Certificate{}, err
	}
	if err := writeKey(keyFile, key); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(certFile, keyFile)
}

// certServes reports whether cert was issued by ca, names every one of
// hosts and stays valid for 30 more days.
func certServes(cert tls.Certificate, ca *x509.Certificate, hosts []string, now time.Time) bool {
	leaf, err := x509.ParseCertificate(cert.Certificate[0])
	if err != nil || leaf.CheckSignatureFrom(ca) != nil || now.AddDate(0, 0, 30).After(leaf.NotAfter) {
		return false
	}
	for _, host := range hosts {
		if ip := net.ParseIP(host); ip != nil {
			if !slices.ContainsFunc(leaf.IPAddresses, ip.Equal) {
				return false
			}
		} else if leaf.VerifyHostname(host) != nil {
			return false
		}
	}
	return true
}

// loadOrCreateCA returns the CA of dir, made (valid ten years) when
// there is none.
func loadOrCreateCA(dir string, now time.Time) (*x509.Certificate, *ecdsa.PrivateKey, error) {
	caFile, keyFile := filepath.Join(dir, caFileName), filepath.Join(dir, caKeyFileName)
	if pair, err := tls.LoadX509KeyPair(caFile, keyFile); err == nil {
		ca, err := x509.ParseCertificate(pair.Certificate[0])
		key, ok := pair.PrivateKey.(*ecdsa.PrivateKey)
		if err == nil && ok {
			return ca, key, nil
		}
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(), Subject: pkix.Name{CommonName: "forgeapi local CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(10, 0, 0),
		IsCA: true, BasicConstraintsValid: true, MaxPathLenZero: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageCRLSign,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, err
	}
	if err := writeKey(keyFile, key); err != nil {
		return nil, nil, err
	}
	if err := writePEM(caFile, "CERTIFICATE", der, 0o644); err != nil {
		return nil, nil, err
	}
	ca, err := x509.ParseCertificate(der)
	return ca, key, err
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 120))
	return n
}

func writeKey(file string, key *ecdsa.PrivateKey) error {
	der, err := x509.MarshalECPrivateKey(key)
	if err != nil {
		return err
	}
	return writePEM(file, "EC PRIVATE KEY", der, 0o600)
}

// writePEM writes one PEM block to file through a temporary file, so that
// a crash never leaves half a certificate.
func writePEM(file, typ string, der []byte, mode os.FileMode) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), mode); err != nil {
		return err
	}
	return os.Rename(tmp, file)
}
