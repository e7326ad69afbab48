package secretbox

import (
	"bytes"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
)

const testSecret = "It's a Secret to Everybody"

func newTestBox(t *testing.T) *Box {
	t.Helper()
	key, err := GenerateKey()
	if err != nil {
		t.Fatal(err)
	}
	box, err := New(key)
	if err != nil {
		t.Fatal(err)
	}
	return box
}

func TestSecretBoxRoundTrip(t *testing.T) {
	t.Parallel()
	box := newTestBox(t)
	for _, secret := range []string{"s", testSecret, "ünïcødé 🔑", strings.Repeat("x", 4096)} {
		sealed, err := box.Seal(secret)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(sealed, "v1:") || len(secret) > 3 && strings.Contains(sealed, secret) {
			t.Errorf("sealed %q = %q, want an opaque v1: value", secret, sealed)
		}
		again, _ := box.Seal(secret)
		if again == sealed {
			t.Error("two seals of one secret are equal: nonce reused")
		}
		opened, err := box.Open(sealed)
		if err != nil || opened != secret {
			t.Errorf("Open(Seal(%q)) = %q, %v", secret, opened, err)
		}
	}
}

func TestSecretBoxEmptyStaysEmpty(t *testing.T) {
	t.Parallel()
	box := newTestBox(t)
	sealed, err := box.Seal("")
	if err != nil || sealed != "" {
		t.Errorf("Seal(\"\") = %q, %v", sealed, err)
	}
	opened, err := box.Open("")
	if err != nil || opened != "" {
		t.Errorf("Open(\"\") = %q, %v", opened, err)
	}
}

func TestSecretBoxDetectsTampering(t *testing.T) {
	t.Parallel()
	box := newTestBox(t)
	sealed, err := box.Seal(testSecret)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := base64.StdEncoding.DecodeString(strings.TrimPrefix(sealed, "v1:"))
	for i := range raw {
		flipped := bytes.Clone(raw)
		flipped[i] ^= 0x01
		if _, err := box.Open("v1:" + base64.StdEncoding.EncodeToString(flipped)); !errors.Is(err, ErrInvalidSealed) {
			t.Fatalf("byte %d flipped: err = %v, want ErrInvalidSealed", i, err)
		}
	}
	for _, bad := range []string{
		testSecret,                      // never sealed
		"v2:" + sealed[3:],              // unknown version
		"v1:" + sealed[3:len(sealed)-4], // truncated
		"v1:!!!",                        // not base64
		"v1:",                           // nothing
	} {
		if _, err := box.Open(bad); !errors.Is(err, ErrInvalidSealed) {
			t.Errorf("Open(%q) err = %v, want ErrInvalidSealed", bad, err)
		}
	}
	if _, err := newTestBox(t).Open(sealed); !errors.Is(err, ErrInvalidSealed) {
		t.Errorf("open with another key: err = %v, want ErrInvalidSealed", err)
	}
}

func TestSecretBoxErrorsDoNotLeak(t *testing.T) {
	t.Parallel()
	box := newTestBox(t)
	sealed, _ := box.Seal(testSecret)
	_, err := newTestBox(t).Open(sealed)
	if err == nil || strings.Contains(err.Error(), testSecret) || strings.Contains(err.Error(), sealed[3:]) {
		t.Errorf("error %q leaks material", err)
	}
}

func TestNewKeySize(t *testing.T) {
	t.Parallel()
	for _, n := range []int{0, 16, 24, 31, 33, 64} {
		if _, err := New(make([]byte, n)); !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%d-byte key: err = %v, want ErrInvalidKey", n, err)
		}
	}
}

func TestParseKey(t *testing.T) {
	t.Parallel()
	key, _ := GenerateKey()
	for name, s := range map[string]string{
		"hex":            hex.EncodeToString(key),
		"upper hex":      strings.ToUpper(hex.EncodeToString(key)),
		"base64":         base64.StdEncoding.EncodeToString(key),
		"raw base64":     base64.RawStdEncoding.EncodeToString(key),
		"url base64":     base64.URLEncoding.EncodeToString(key),
		"raw url base64": base64.RawURLEncoding.EncodeToString(key),
		"with newline":   hex.EncodeToString(key) + "\n",
	} {
		got, err := ParseKey(s)
		if err != nil || !bytes.Equal(got, key) {
			t.Errorf("%s: ParseKey = %x, %v", name, got, err)
		}
	}
	for name, s := range map[string]string{
		"empty":       "",
		"short hex":   hex.EncodeToString(key[:16]),
		"long base64": base64.StdEncoding.EncodeToString(append(key, 1)),
		"not a key":   "correct horse battery staple",
		"bad hex":     strings.Repeat("zz", 32),
	} {
		_, err := ParseKey(s)
		if !errors.Is(err, ErrInvalidKey) {
			t.Errorf("%s: err = %v, want ErrInvalidKey", name, err)
		}
		if s != "" && strings.Contains(err.Error(), s) {
			t.Errorf("%s: error echoes the input", name)
		}
	}
}

func TestLoadOrCreateKey(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "data", "webhook-secret.key")

	created, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	info, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if info.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", info.Mode().Perm())
	}
	reused, err := LoadOrCreateKey(path)
	if err != nil || !bytes.Equal(reused, created) || len(created) != KeySize {
		t.Errorf("second load = %x, %v; want the created key %x", reused, err, created)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("data dir holds %d entries, want only the key file", len(entries))
	}
	data, _ := os.ReadFile(path)
	if fromFile, err := ParseKey(string(data)); err != nil || !bytes.Equal(fromFile, created) {
		t.Errorf("key file does not hold the key as ParseKey reads it: %v", err)
	}
}

func TestLoadOrCreateKeyConcurrently(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "webhook-secret.key")
	const n = 16
	keys := make([][]byte, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { keys[i], errs[i] = LoadOrCreateKey(path) })
	}
	wg.Wait()
	for i := range n {
		if errs[i] != nil || !bytes.Equal(keys[i], keys[0]) {
			t.Errorf("caller %d got %x, %v; want the same key as caller 0", i, keys[i], errs[i])
		}
	}
}

func TestLoadOrCreateKeyRejectsBadFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "webhook-secret.key")
	if err := os.WriteFile(path, []byte("not a key\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := LoadOrCreateKey(path); !errors.Is(err, ErrInvalidKey) {
		t.Errorf("err = %v, want ErrInvalidKey", err)
	}
	data, _ := os.ReadFile(path)
	if string(data) != "not a key\n" {
		t.Error("an invalid key file was overwritten")
	}
}
