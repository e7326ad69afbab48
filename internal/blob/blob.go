// Package blob stores migration archives: large, write-once objects
// addressed by a key, downloaded by clients through signed, expiring URLs.
//
// Two backends implement Store: Local keeps objects as files under a
// directory (the default, under the server's data directory) and serves
// them through its own HMAC-signed URLs; S3 keeps them in a bucket of an
// S3-compatible service and hands out presigned GET URLs. Open builds
// either from a one-line spec such as "file:///var/lib/forgeapi/blobs" or
// "s3://archives?endpoint=minio:9000&region=us-east-1&secure=false".
//
// Both backends stream: Put never holds a whole object in memory.
package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"
)

// ContentType is the media type under which stored objects are served.
// The store holds migration archives, which are gzip-compressed tarballs.
const ContentType = "application/gzip"

// MaxKeyLength is the longest key a Store accepts, in bytes.
const MaxKeyLength = 512

// MaxURLTTL is the longest lifetime of a signed URL. It matches the longest
// presigned URL that S3 accepts.
const MaxURLTTL = 7 * 24 * time.Hour

// Errors returned by every Store. Test them with errors.Is.
var (
	// ErrNotFound means no object is stored under the key.
	ErrNotFound = errors.New("blob: not found")
	// ErrInvalidKey means the key is not a valid object key (see ValidateKey).
	ErrInvalidKey = errors.New("blob: invalid key")
	// ErrUnavailable means the store cannot be used as configured: the
	// bucket does not exist, credentials are refused, the directory is not
	// writable. Check wraps it with the cause.
	ErrUnavailable = errors.New("blob: storage is not usable")
)

// Store is a flat namespace of objects addressed by key. Implementations
// are safe for concurrent use.
type Store interface {
	// Put stores everything read from r under key, replacing any object
	// already there, and returns the number of bytes stored. It streams:
	// memory use does not grow with the size of the object. Readers of the
	// key see either the old object or the complete new one, never a
	// partial write. If r or ctx fails, nothing is stored under key and
	// the error is returned.
	Put(ctx context.Context, key string, r io.Reader) (size int64, err error)

	// Open returns a reader of the object stored under key, or an error
	// wrapping ErrNotFound. The caller must close it.
	Open(ctx context.Context, key string) (io.ReadCloser, error)

	// Delete removes the object stored under key. Deleting a key that holds
	// nothing succeeds.
	Delete(ctx context.Context, key string) error

	// URL returns an absolute URL from which an HTTP client can GET the
	// object under key without further credentials until ttl has passed.
	// ttl must be positive and at most MaxURLTTL. URL does not check that
	// the object exists.
	URL(ctx context.Context, key string, ttl time.Duration) (string, error)

	// Check reports whether the store is usable for writing: nil, or an
	// error wrapping ErrUnavailable that describes why not.
	Check(ctx context.Context) error
}

// ValidateKey returns nil if key is a valid object key, or an error wrapping
// ErrInvalidKey. A key is 1 to MaxKeyLength bytes of ASCII letters, digits,
// '-', '_', '.' and '/', made of '/'-separated segments that are neither
// empty nor start with '.' (so no absolute paths, no "..", no hidden files).
// Example: "migrations/42/6f1c2e.tar.gz".
func ValidateKey(key string) error {
	if key == "" || len(key) > MaxKeyLength {
		return fmt.Errorf("%w: length must be 1 to %d bytes", ErrInvalidKey, MaxKeyLength)
	}
	for _, c := range []byte(key) {
		if !isKeyByte(c) {
			return fmt.Errorf("%w: %q contains a character other than letters, digits, '-', '_', '.', '/'", ErrInvalidKey, key)
		}
	}
	for segment := range strings.SplitSeq(key, "/") {
		if segment == "" || segment[0] == '.' {
			return fmt.Errorf("%w: %q has an empty segment or one starting with '.'", ErrInvalidKey, key)
		}
	}
	return nil
}

func isKeyByte(c byte) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9':
		return true
	case c == '-', c == '_', c == '.', c == '/':
		return true
	}
	return false
}

func validateTTL(ttl time.Duration) error {
	if ttl <= 0 || ttl > MaxURLTTL {
		return fmt.Errorf("blob: URL lifetime %v out of range (0, %v]", ttl, MaxURLTTL)
	}
	return nil
}

// contextReader fails reads once its context is done, so that a copy from
// a slow or endless reader stops when the caller gives up.
type contextReader struct {
	ctx context.Context
	r   io.Reader
}

func (c contextReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}
