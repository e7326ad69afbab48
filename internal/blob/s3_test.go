package blob_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/johannesboyne/gofakes3"
	"github.com/johannesboyne/gofakes3/backend/s3mem"

	"forgeapi/internal/blob"
)

const testBucket = "archives"

// fakeS3 is an in-process S3-compatible server (gofakes3, in memory)
// holding an empty bucket named testBucket. It accepts any credentials and
// does not verify signatures.
//
// It listens on HTTPS, as S3 does: over plain HTTP minio-go signs uploaded
// parts with aws-chunked streaming signatures, which gofakes3 decodes for
// single PUTs but not for multipart parts.
type fakeS3 struct {
	endpoint string       // host:port
	client   *http.Client // trusts the server's certificate
}

func startFakeS3(t *testing.T) fakeS3 {
	t.Helper()
	backend := s3mem.New()
	if err := backend.CreateBucket(testBucket); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewTLSServer(gofakes3.New(backend).Server())
	t.Cleanup(srv.Close)
	return fakeS3{endpoint: srv.Listener.Addr().String(), client: srv.Client()}
}

func newS3(t *testing.T, fake fakeS3, bucket string) *blob.S3 {
	t.Helper()
	s, err := blob.NewS3(blob.S3Config{
		Endpoint:        fake.endpoint,
		Bucket:          bucket,
		Prefix:          "forgeapi/",
		Region:          "us-east-1",
		Transport:       fake.client.Transport,
		AccessKeyID:     "test-access-key",
		SecretAccessKey: "test-secret-key",
		PartSize:        5 << 20, // the S3 minimum, so a small object needs several parts
	})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// streamOnly hides every method but Read, so the uploader cannot learn the
// size or seek: it has to stream.
type streamOnly struct{ r io.Reader }

func (s streamOnly) Read(p []byte) (int, error) { return s.r.Read(p) }

func pseudoRandom(seed uint64, n int64) io.Reader {
	rng := rand.NewChaCha8([32]byte{byte(seed)})
	return io.LimitReader(rng, n)
}

func TestS3PutOpenDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newS3(t, startFakeS3(t), testBucket)
	const size = 12<<20 + 123 // three parts of 5 MiB
	want := sha256.New()
	io.Copy(want, pseudoRandom(1, size))

	n, err := s.Put(ctx, "migrations/1/archive.tar.gz", streamOnly{pseudoRandom(1, size)})
	if err != nil || n != size {
		t.Fatalf("Put = %d, %v; want %d, nil", n, err, size)
	}
	rc, err := s.Open(ctx, "migrations/1/archive.tar.gz")
	if err != nil {
		t.Fatal(err)
	}
	got := sha256.New()
	copied, err := io.Copy(got, rc)
	rc.Close()
	if err != nil || copied != size || !bytes.Equal(got.Sum(nil), want.Sum(nil)) {
		t.Fatalf("Open read %d bytes (%v), digest match %v", copied, err, bytes.Equal(got.Sum(nil), want.Sum(nil)))
	}

	for range 2 { // Delete is idempotent.
		if err := s.Delete(ctx, "migrations/1/archive.tar.gz"); err != nil {
			t.Fatalf("Delete: %v", err)
		}
	}
	if _, err := s.Open(ctx, "migrations/1/archive.tar.gz"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open after Delete = %v, want ErrNotFound", err)
	}
}

func TestS3PresignedURL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := startFakeS3(t)
	s := newS3(t, fake, testBucket)
	if _, err := s.Put(ctx, "a.tar.gz", strings.NewReader("archive bytes")); err != nil {
		t.Fatal(err)
	}
	signed, err := s.URL(ctx, "a.tar.gz", 15*time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(signed, "X-Amz-Signature=") || !strings.Contains(signed, "X-Amz-Expires=900") {
		t.Fatalf("URL %s is not a presigned URL valid for 15 minutes", signed)
	}
	resp, err := fake.client.Get(signed) // a plain net/http client, no S3 credentials
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK || string(body) != "archive bytes" {
		t.Fatalf("GET presigned URL: %d %q", resp.StatusCode, body)
	}
	if _, err := s.URL(ctx, "../a", time.Minute); !errors.Is(err, blob.ErrInvalidKey) {
		t.Fatalf("URL with invalid key = %v, want ErrInvalidKey", err)
	}
	if _, err := s.URL(ctx, "a.tar.gz", 8*24*time.Hour); err == nil {
		t.Fatal("URL with a lifetime over 7 days succeeded")
	}
}

func TestS3PutFailureStoresNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := newS3(t, startFakeS3(t), testBucket)
	broken := io.MultiReader(pseudoRandom(2, 6<<20), iotestErrReader{errors.New("source broke")})
	if _, err := s.Put(ctx, "broken.tar.gz", broken); err == nil {
		t.Fatal("Put from a failing reader succeeded")
	}
	if _, err := s.Open(ctx, "broken.tar.gz"); !errors.Is(err, blob.ErrNotFound) {
		t.Fatalf("Open after failed Put = %v, want ErrNotFound", err)
	}
}

type iotestErrReader struct{ err error }

func (r iotestErrReader) Read([]byte) (int, error) { return 0, r.err }

func TestS3Check(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := startFakeS3(t)
	if err := newS3(t, fake, testBucket).Check(ctx); err != nil {
		t.Fatalf("Check on existing bucket = %v", err)
	}
	if err := newS3(t, fake, "missing-bucket").Check(ctx); !errors.Is(err, blob.ErrUnavailable) {
		t.Fatalf("Check on missing bucket = %v, want ErrUnavailable", err)
	}
}

func TestOpenSpec(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	fake := startFakeS3(t)
	env := map[string]string{"AWS_ACCESS_KEY_ID": "id", "AWS_SECRET_ACCESS_KEY": "secret"}
	opts := blob.Options{
		Dir:         t.TempDir(),
		BaseURL:     "https://forge.example.com",
		SigningKey:  testSigningKey,
		Getenv:      func(name string) string { return env[name] },
		S3Transport: fake.client.Transport,
	}

	s3store, err := blob.Open("s3://"+testBucket+"?endpoint="+fake.endpoint+"&region=us-east-1&secure=true&prefix=x/", opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := s3store.(*blob.S3); !ok {
		t.Fatalf("s3:// spec built %T, want *blob.S3", s3store)
	}
	if err := s3store.Check(ctx); err != nil {
		t.Fatalf("Check = %v", err)
	}

	if _, err := blob.Open("s3://"+testBucket+"?endpoint=minio:9000&secure=false", opts); err != nil {
		t.Fatalf("Open of an http S3 spec: %v", err)
	}
	for _, spec := range []string{"", "file://" + t.TempDir()} {
		store, err := blob.Open(spec, opts)
		if err != nil {
			t.Fatalf("Open(%q): %v", spec, err)
		}
		if _, ok := store.(*blob.Local); !ok {
			t.Fatalf("Open(%q) built %T, want *blob.Local", spec, store)
		}
		if err := store.Check(ctx); err != nil {
			t.Fatalf("Check(%q) = %v", spec, err)
		}
	}

	for _, spec := range []string{
		"gs://bucket", "s3://", "s3://bucket/path", "s3://bucket?secure=maybe",
		"s3://bucket?endpont=typo", "s3://user:password@bucket",
	} {
		_, err := blob.Open(spec, opts)
		if err == nil {
			t.Errorf("Open(%q) succeeded, want error", spec)
		} else if strings.Contains(err.Error(), "password") {
			t.Errorf("Open(%q) error leaks the secret: %v", spec, err)
		}
	}
	if _, err := blob.Open("", blob.Options{Dir: t.TempDir()}); err == nil {
		t.Error("Open of a local store without base URL and key succeeded")
	}
}
