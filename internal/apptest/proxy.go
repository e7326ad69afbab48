package apptest

import (
	"crypto/tls"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"path/filepath"
)

// ValidatingProxy returns the address of a reverse proxy to the server
// that validates every exchange as the Env's clients do (Transport), a
// mismatch failing the test: clients that the test runs outside Go
// (octokit.js, gh) send their requests through it. It serves HTTPS with
// the server's own certificate when the server does (WithTLS: clients
// trust Main.CAFile for both), plain HTTP otherwise, and stops when the
// test ends. The server sees its own host in the requests, so the
// addresses in its answers are its own.
func (e *Env) ValidatingProxy() string {
	e.T.Helper()
	target, err := url.Parse(e.URL)
	e.must(err)
	srv := httptest.NewUnstartedServer(&httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: e.Transport(),
	})
	if e.Main.CAFile() == "" {
		srv.Start()
	} else {
		// The local CA's server certificate (DATA/tls, tlsca), which
		// names 127.0.0.1 whatever the port.
		dir := filepath.Join(e.DataDir, "tls")
		cert, err := tls.LoadX509KeyPair(filepath.Join(dir, "server.pem"), filepath.Join(dir, "server-key.pem"))
		e.must(err)
		srv.TLS = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
		srv.StartTLS()
	}
	e.T.Cleanup(srv.Close)
	return srv.URL
}
