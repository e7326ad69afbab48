package app

import (
	"crypto/tls"
	"net/http"
	"path/filepath"
	"time"

	"forgeapi/internal/tlsca"
)

// TLSSelfSigned is the value of Config.TLS (--tls) that makes forgeapi
// serve HTTPS with a certificate of its own local CA, under DATA/tls.
const TLSSelfSigned = tlsca.SelfSigned

// serverTLS returns the TLS configuration of the API and git listener
// (nil for plain HTTP), and for --tls self-signed the CA file that
// clients should trust (see tlsca.ServerConfig; the local CA lives in
// DATA/tls).
func serverTLS(cfg Config, listenHost string) (*tls.Config, string, error) {
	return tlsca.ServerConfig(tlsca.Source{Mode: cfg.TLS, CertFile: cfg.TLSCertFile, KeyFile: cfg.TLSKeyFile,
		Dir: filepath.Join(cfg.DataDir, "tls"), ListenHost: listenHost, BaseURL: cfg.BaseURL}, time.Now())
}

// strictTransportSecurity is the Strict-Transport-Security value of
// HTTPS answers. With the operator's certificate, a year, as the
// platform's; without the platform's includeSubDomains, which would
// force HTTPS on every host under the server's name (not the server's
// call), and preload, which asks browsers to hard-code the whole domain
// and takes months to undo. With --tls self-signed, a day: the local CA
// is made again with a new data directory, and a browser that trusted
// the old one could not click through to the new one (HSTS forbids it)
// while the policy lasts; nor could it reach another server on the same
// name over plain HTTP (a policy holds for every port of a name, so a
// "localhost" would take every local server along; browsers ignore it
// for IP addresses).
func strictTransportSecurity(cfg Config) string {
	if cfg.TLS == TLSSelfSigned {
		return "max-age=86400"
	}
	return "max-age=31536000"
}

// withHSTS sets Strict-Transport-Security to value on the answers to
// requests that came over TLS, and never on others.
func withHSTS(next http.Handler, value string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.TLS != nil {
			w.Header().Set("Strict-Transport-Security", value)
		}
		next.ServeHTTP(w, r)
	})
}
