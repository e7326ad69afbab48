package actions

import (
	"context"
	"encoding/base64"
	"encoding/hex"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/store"
)

// The signed upload addresses of artifacts and caches: the clients upload
// with the blob storage protocol they speak to the platform's storage
// (Azure's Put Blob, Put Block and Put Block List), here to
// PUT /_actions/uploads/{kind}/{id}?token=T. The token is random, stored
// hashed on the artifact's or cache's row, and works until the row is
// finalized. Blocks are kept in the blob store until the block list
// assembles them, in its order, into the object.

// An upload kind: the table of its rows and the blob key of its object.
type uploadKind struct {
	table string
	key   func(id int64) string
}

var uploadKinds = map[string]uploadKind{
	"artifacts": {table: "actions_artifacts", key: artifactKey},
	"caches":    {table: "actions_caches", key: cacheKey},
}

// uploadURL is the signed upload address of the row id of kind, on the
// base the caller reached (reachedBase); the token's hash must be stored
// on the row.
func (s *Service) uploadURL(ctx context.Context, kind string, id int64, token string) string {
	return fmt.Sprintf("%s%s%s/%d?token=%s", reachedBase(ctx, s.BaseURL), uploadPathPrefix, kind, id, url.QueryEscape(token))
}

// reachedKey carries the host a results service request came to.
type reachedKey struct{}

// withReached keeps the host the request came to for reachedBase.
func withReached(r *http.Request) context.Context {
	return context.WithValue(r.Context(), reachedKey{}, r.Host)
}

// reachedBase is the server's base URL as the caller reached it: when
// the base URL is on a loopback address (a server listening only on its
// machine) and the request came to another host, that host (a job
// container on its services' network reaches the server through the
// engine's relay, at another address), else the base URL. Only the
// caller's own addresses are built on it.
func reachedBase(ctx context.Context, base string) string {
	base = trimSlash(base)
	host, _ := ctx.Value(reachedKey{}).(string)
	u, err := url.Parse(base)
	if err != nil || host == "" || host == u.Host {
		return base
	}
	if ip := net.ParseIP(u.Hostname()); u.Hostname() != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return base
	}
	u.Host = host
	return u.String()
}

// reachedURL is u (an address of this server, such as a signed blob
// URL) on the base the caller reached.
func reachedURL(ctx context.Context, base, u string) string {
	base = trimSlash(base)
	if rest, ok := strings.CutPrefix(u, base); ok {
		return reachedBase(ctx, base) + rest
	}
	return u
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// blockKey is the blob key of a staged block.
func blockKey(kind string, id int64, blockID string) string {
	return fmt.Sprintf("actions-upload-%s-%d-%s", kind, id, hex.EncodeToString([]byte(blockID)))
}

// blockList is Put Block List's body.
type blockList struct {
	IDs []blockRef `xml:",any"`
}

type blockRef struct {
	XMLName xml.Name
	Value   string `xml:",chardata"`
}

// serveUpload answers the PUTs of a signed upload address: a whole
// object (no comp), a block (comp=block&blockid=ID) or the block list
// (comp=blocklist), with 201 as the storage does.
func (s *Service) serveUpload(w http.ResponseWriter, r *http.Request) {
	kindName := strings.Split(strings.TrimPrefix(r.URL.Path, uploadPathPrefix), "/")[0]
	kind, ok := uploadKinds[kindName]
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	if !ok || err != nil || s.Blobs == nil {
		writeStorageError(w, http.StatusNotFound, "ResourceNotFound")
		return
	}
	if ok, err := s.uploadAllowed(r.Context(), kind, id, r.URL.Query().Get("token")); err != nil || !ok {
		writeStorageError(w, http.StatusForbidden, "AuthenticationFailed")
		return
	}
	q := r.URL.Query()
	switch q.Get("comp") {
	case "":
		err = s.putObject(r.Context(), kind, id, r.Body)
	case "block", "appendblock":
		raw, derr := base64.StdEncoding.DecodeString(q.Get("blockid"))
		if derr != nil || len(raw) == 0 {
			writeStorageError(w, http.StatusBadRequest, "InvalidQueryParameterValue")
			return
		}
		err = s.putBlock(r.Context(), kindName, id, q.Get("blockid"), r.Body)
	case "blocklist":
		err = s.commitBlocks(r.Context(), kindName, kind, id, r.Body)
	default:
		writeStorageError(w, http.StatusBadRequest, "InvalidQueryParameterValue")
		return
	}
	if errors.Is(err, errBadBlockList) {
		writeStorageError(w, http.StatusBadRequest, "InvalidBlockList")
		return
	}
	if err != nil {
		writeStorageError(w, http.StatusInternalServerError, "InternalError")
		return
	}
	h := w.Header()
	h.Set("ETag", `"0x`+strconv.FormatInt(time.Now().UnixNano(), 16)+`"`)
	h.Set("Last-Modified", time.Now().UTC().Format(http.TimeFormat))
	h.Set("x-ms-request-server-encrypted", "false")
	h.Set("x-ms-version", "2025-01-05")
	w.WriteHeader(http.StatusCreated)
}

// uploadAllowed reports whether token is the upload token of the row id,
// not finalized yet.
func (s *Service) uploadAllowed(ctx context.Context, kind uploadKind, id int64, token string) (bool, error) {
	if token == "" {
		return false, nil
	}
	var n int
	err := s.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM `+kind.table+` WHERE id = $1 AND upload_token_hash = $2 AND NOT finalized`,
		id, hashToken(token)).Scan(&n)
	return n == 1, err
}

// putObject stores the whole object and its size.
func (s *Service) putObject(ctx context.Context, kind uploadKind, id int64, body io.Reader) error {
	size, err := s.Blobs.Put(ctx, kind.key(id), body)
	if err != nil {
		return err
	}
	_, err = s.DB.ExecContext(ctx, `UPDATE `+kind.table+` SET size_in_bytes = $1 WHERE id = $2`, size, id)
	return err
}

var errBadBlockList = errors.New("actions: invalid block list")

// commitBlocks assembles the staged blocks the list names, in its order,
// into the object, then deletes them.
func (s *Service) commitBlocks(ctx context.Context, kindName string, kind uploadKind, id int64, body io.Reader) error {
	var list blockList
	if err := xml.NewDecoder(io.LimitReader(body, 4<<20)).Decode(&list); err != nil {
		return errBadBlockList
	}
	keys := make([]string, 0, len(list.IDs))
	for _, b := range list.IDs {
		keys = append(keys, blockKey(kindName, id, b.Value))
	}
	pr, pw := io.Pipe()
	go func() { pw.CloseWithError(s.concatBlobs(ctx, pw, keys)) }()
	err := s.putObject(ctx, kind, id, pr)
	_ = pr.Close()
	if err != nil {
		return err
	}
	if kindName == "caches" { // and the blocks staged but not listed
		rows, err := s.DB.QueryContext(ctx, `DELETE FROM actions_cache_blocks WHERE cache_id = $1 RETURNING block_id`, id)
		staged, err := store.ScanAll(rows, err, func(row store.Scanner) (string, error) {
			var b string
			return b, row.Scan(&b)
		})
		if err != nil {
			return err
		}
		for _, b := range staged {
			keys = append(keys, blockKey(kindName, id, b))
		}
	}
	for _, k := range keys {
		_ = s.Blobs.Delete(ctx, k)
	}
	return nil
}

// putBlock stages a block; a cache's blocks are recorded on its entry
// (actions_cache_blocks), so that the CachePruner finds the blocks of a
// reservation never committed.
func (s *Service) putBlock(ctx context.Context, kindName string, id int64, blockID string, body io.Reader) error {
	key := blockKey(kindName, id, blockID)
	if _, err := s.Blobs.Put(ctx, key, body); err != nil || kindName != "caches" {
		return err
	}
	_, err := s.DB.ExecContext(ctx, `INSERT INTO actions_cache_blocks (cache_id, block_id) VALUES ($1, $2)
		ON CONFLICT (cache_id, block_id) DO NOTHING`, id, blockID)
	if err != nil { // the reservation was removed meanwhile
		_ = s.Blobs.Delete(ctx, key)
	}
	return err
}

// concatBlobs writes the blobs of keys to w, one after the other.
func (s *Service) concatBlobs(ctx context.Context, w io.Writer, keys []string) error {
	for _, k := range keys {
		rc, err := s.Blobs.Open(ctx, k)
		if err != nil {
			return errBadBlockList
		}
		_, err = io.Copy(w, rc)
		_ = rc.Close()
		if err != nil {
			return err
		}
	}
	return nil
}

// writeStorageError answers as the blob storage does: its error code in
// an XML body.
func writeStorageError(w http.ResponseWriter, status int, code string) {
	w.Header().Set("Content-Type", "application/xml")
	w.Header().Set("x-ms-error-code", code)
	w.WriteHeader(status)
	_, _ = fmt.Fprintf(w, `<?xml version="1.0" encoding="utf-8"?><Error><Code>%s</Code><Message>%s</Message></Error>`, code, code)
}
