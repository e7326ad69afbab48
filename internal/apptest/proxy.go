package apptest

import (
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
)

// ValidatingProxy returns the address of a reverse proxy to the server
// that validates every exchange as the Env's clients do (Transport), a
// mismatch failing the test: clients that the test runs outside Go
// (octokit.js) send their requests through it. It serves plain HTTP and
// stops when the test ends.
func (e *Env) ValidatingProxy() string {
	e.T.Helper()
	target, err := url.Parse(e.URL)
	e.must(err)
	proxy := &httputil.ReverseProxy{
		Rewrite:   func(r *httputil.ProxyRequest) { r.SetURL(target) },
		Transport: e.Transport(),
	}
	srv := httptest.NewServer(proxy)
	e.T.Cleanup(srv.Close)
	return srv.URL
}
