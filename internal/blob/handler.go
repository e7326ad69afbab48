package blob

import (
	"crypto/hmac"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"path"
	"strconv"
	"strings"
)

// Handler returns an http.Handler that serves the URLs made by URL. Mount
// it at URLPathPrefix of the server named by the base URL, e.g.
// mux.Handle("GET "+blob.URLPathPrefix, local.Handler()). Requests whose
// path does not start with URLPathPrefix answer 404. See ServeSigned.
func (l *Local) Handler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key, ok := strings.CutPrefix(r.URL.Path, URLPathPrefix)
		if !ok {
			writeError(w, http.StatusNotFound, "Not Found")
			return
		}
		l.ServeSigned(w, r, key)
	})
}

// ServeSigned answers a GET or HEAD request for the object under key when
// the request's query carries the expires and signature parameters that URL
// made for that key and the expiry time has not passed. It streams the file
// as ContentType, honouring Range and conditional requests.
//
// It refuses a missing, malformed or wrong signature and an expired URL
// with 403, an unknown key with 404, and other methods with 405, each with
// a JSON body {"message": "..."}. Signatures are compared in constant time.
func (l *Local) ServeSigned(w http.ResponseWriter, r *http.Request, key string) {
	if r.Method != http.MethodGet && r.Method != http.MethodHead {
		w.Header().Set("Allow", "GET, HEAD")
		writeError(w, http.StatusMethodNotAllowed, "Method Not Allowed")
		return
	}
	if ValidateKey(key) != nil {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if status, message := l.verify(r, key); status != http.StatusOK {
		writeError(w, status, message)
		return
	}
	f, info, err := l.openFile(key)
	if errors.Is(err, ErrNotFound) {
		writeError(w, http.StatusNotFound, "Not Found")
		return
	}
	if err != nil {
		writeError(w, http.StatusInternalServerError, "The archive could not be read.")
		return
	}
	defer f.Close()
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("Content-Disposition", `attachment; filename="`+path.Base(key)+`"`)
	h.Set("Cache-Control", "private, no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	http.ServeContent(w, r, "", info.ModTime(), f)
}

// verify checks the signature and expiry in r's query for key. It returns
// http.StatusOK, or the status and message of the refusal.
func (l *Local) verify(r *http.Request, key string) (int, string) {
	query := r.URL.Query()
	expires, err := strconv.ParseInt(query.Get("expires"), 10, 64)
	if err != nil {
		return http.StatusForbidden, "The URL is missing a valid expiry time."
	}
	signature, err := hex.DecodeString(query.Get("signature"))
	if err != nil || !hmac.Equal(signature, l.sign(key, expires)) {
		return http.StatusForbidden, "The URL signature is invalid."
	}
	if l.now().Unix() > expires {
		return http.StatusForbidden, "The URL has expired."
	}
	return http.StatusOK, ""
}

// writeError writes a JSON error body {"message": message} with status.
func writeError(w http.ResponseWriter, status int, message string) {
	h := w.Header()
	h.Set("Content-Type", "application/json; charset=utf-8")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(struct {
		Message string `json:"message"`
	}{message})
}
