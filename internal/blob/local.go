package blob

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// MinSigningKeyLength is the shortest signing key Local accepts, in bytes.
const MinSigningKeyLength = 32

// URLPathPrefix is the path, under the base URL, at which Local's signed
// URLs point and at which its Handler serves objects.
const URLPathPrefix = "/_blobs/"

// tempDirName is the directory, inside the store directory, where Put
// writes objects before renaming them into place. Keys cannot name it
// because no key segment starts with '.'.
const tempDirName = ".tmp"

// LocalConfig configures a Local store.
type LocalConfig struct {
	// Dir is the directory holding the objects. It is created if missing.
	Dir string
	// BaseURL is the absolute http or https URL under which the server is
	// reached by clients, e.g. "https://forge.example.com". Signed URLs are
	// BaseURL + URLPathPrefix + key + query.
	BaseURL string
	// SigningKey is the secret key of URL signatures: at least
	// MinSigningKeyLength bytes, kept private by the server.
	SigningKey []byte
	// Now returns the current time, for URL expiry. Nil means time.Now.
	Now func() time.Time
}

// Local is a Store keeping each object as a file under a directory, and
// serving downloads itself through HMAC-SHA256 signed, expiring URLs (see
// Handler). Create it with NewLocal.
type Local struct {
	dir     string
	baseURL string
	key     []byte
	now     func() time.Time
}

var _ Store = (*Local)(nil)

// NewLocal returns a Local store for cfg, creating cfg.Dir if needed. It
// fails if cfg.BaseURL is not an absolute http(s) URL or cfg.SigningKey is
// shorter than MinSigningKeyLength.
func NewLocal(cfg LocalConfig) (*Local, error) {
	if cfg.Dir == "" {
		return nil, errors.New("blob: local store needs a directory")
	}
	base, err := url.Parse(cfg.BaseURL)
	if err != nil || (base.Scheme != "http" && base.Scheme != "https") || base.Host == "" {
		return nil, fmt.Errorf("blob: base URL %q is not an absolute http(s) URL", cfg.BaseURL)
	}
	if len(cfg.SigningKey) < MinSigningKeyLength {
		return nil, fmt.Errorf("blob: signing key must be at least %d bytes", MinSigningKeyLength)
	}
	dir, err := filepath.Abs(cfg.Dir)
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("blob: create store directory: %w", err)
	}
	now := cfg.Now
	if now == nil {
		now = time.Now
	}
	return &Local{
		dir:     dir,
		baseURL: strings.TrimSuffix(cfg.BaseURL, "/"),
		key:     append([]byte(nil), cfg.SigningKey...),
		now:     now,
	}, nil
}

// Dir returns the absolute directory holding the objects.
func (l *Local) Dir() string { return l.dir }

// Put writes r to a temporary file, syncs it, and renames it over the
// object's file, so that the object appears complete or not at all.
func (l *Local) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	path, err := l.path(key)
	if err != nil {
		return 0, err
	}
	tmp, err := l.createTemp()
	if err != nil {
		return 0, err
	}
	size, err := writeAndSync(tmp, contextReader{ctx, r})
	if err == nil {
		err = renameIntoPlace(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
		return 0, fmt.Errorf("blob: put %s: %w", key, err)
	}
	return size, nil
}

func (l *Local) createTemp() (*os.File, error) {
	tmpDir := filepath.Join(l.dir, tempDirName)
	if err := os.MkdirAll(tmpDir, 0o750); err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	f, err := os.CreateTemp(tmpDir, "put-*")
	if err != nil {
		return nil, fmt.Errorf("blob: %w", err)
	}
	return f, nil
}

// writeAndSync copies r into f, flushes it to stable storage and closes it.
func writeAndSync(f *os.File, r io.Reader) (int64, error) {
	size, err := io.Copy(f, r)
	if err == nil {
		err = f.Sync()
	}
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	return size, err
}

// renameIntoPlace moves the file at from to path, creating path's parent
// directories, and syncs the parent so the rename survives a crash.
func renameIntoPlace(from, path string) error {
	parent := filepath.Dir(path)
	if err := os.MkdirAll(parent, 0o750); err != nil {
		return err
	}
	if err := os.Rename(from, path); err != nil {
		return err
	}
	return syncDir(parent)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// Open opens the object's file.
func (l *Local) Open(_ context.Context, key string) (io.ReadCloser, error) {
	f, _, err := l.openFile(key)
	return f, err
}

// openFile opens the object's file and returns it with its size.
func (l *Local) openFile(key string) (*os.File, fs.FileInfo, error) {
	path, err := l.path(key)
	if err != nil {
		return nil, nil, err
	}
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	if err != nil {
		return nil, nil, fmt.Errorf("blob: open %s: %w", key, err)
	}
	info, err := f.Stat()
	if err == nil && !info.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	return f, info, nil
}

// Delete removes the object's file; a missing file is not an error.
func (l *Local) Delete(_ context.Context, key string) error {
	path, err := l.path(key)
	if err != nil {
		return err
	}
	if err := os.Remove(path); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("blob: delete %s: %w", key, err)
	}
	return nil
}

// URL returns BaseURL + URLPathPrefix + key + "?expires=UNIX&signature=HEX",
// valid until now+ttl; Handler serves it.
func (l *Local) URL(_ context.Context, key string, ttl time.Duration) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	if err := validateTTL(ttl); err != nil {
		return "", err
	}
	expires := l.now().Add(ttl).Unix()
	query := url.Values{
		"expires":   {strconv.FormatInt(expires, 10)},
		"signature": {hex.EncodeToString(l.sign(key, expires))},
	}
	return l.baseURL + URLPathPrefix + key + "?" + query.Encode(), nil
}

// sign returns the MAC binding key to its expiry time.
func (l *Local) sign(key string, expires int64) []byte {
	mac := hmac.New(sha256.New, l.key)
	fmt.Fprintf(mac, "forgeapi-blob-url-v1\n%s\n%d", key, expires)
	return mac.Sum(nil)
}

// Check creates, writes and removes a probe file in the store directory.
func (l *Local) Check(_ context.Context) error {
	f, err := l.createTemp()
	if err != nil {
		return fmt.Errorf("%w: %w", ErrUnavailable, err)
	}
	_, err = f.WriteString("probe")
	if closeErr := f.Close(); err == nil {
		err = closeErr
	}
	if removeErr := os.Remove(f.Name()); err == nil {
		err = removeErr
	}
	if err != nil {
		return fmt.Errorf("%w: directory %s is not writable: %w", ErrUnavailable, l.dir, err)
	}
	return nil
}

// path returns the file of a valid key.
func (l *Local) path(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return filepath.Join(l.dir, filepath.FromSlash(key)), nil
}
