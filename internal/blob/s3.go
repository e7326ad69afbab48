package blob

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"
)

// DefaultS3PartSize is the size of the parts in which S3.Put uploads an
// object of unknown length. Put holds one part in memory at a time; with
// S3's limit of 10,000 parts it stores objects up to about 156 GiB.
const DefaultS3PartSize = 16 << 20

// S3Config configures an S3 store.
type S3Config struct {
	// Endpoint is the host[:port] of the S3-compatible service, without a
	// scheme. Empty means "s3.amazonaws.com".
	Endpoint string
	// Bucket holds the objects. It must exist; Check reports if it does not.
	Bucket string
	// Prefix is prepended to every key to form the object name, e.g.
	// "forgeapi/". Empty means none.
	Prefix string
	// Region of the bucket. Empty lets the client discover it.
	Region string
	// Insecure selects plain HTTP instead of HTTPS.
	Insecure bool
	// AccessKeyID, SecretAccessKey and SessionToken are static credentials.
	// When AccessKeyID is empty, credentials come from the chain of
	// minio-go: the AWS and MinIO environment variables, the AWS and MinIO
	// credential files, and the EC2/ECS instance role.
	AccessKeyID, SecretAccessKey, SessionToken string
	// PartSize is the multipart upload part size; 0 means DefaultS3PartSize.
	PartSize uint64
	// Transport is the HTTP transport of the client; nil means the default
	// of minio-go.
	Transport http.RoundTripper
}

// S3 is a Store keeping objects in a bucket of an S3-compatible service
// through minio-go. Its URLs are presigned GET URLs. Create it with NewS3.
type S3 struct {
	client   *minio.Client
	bucket   string
	prefix   string
	partSize uint64
}

var _ Store = (*S3)(nil)

// NewS3 returns an S3 store for cfg. It does not contact the service; call
// Check for that.
func NewS3(cfg S3Config) (*S3, error) {
	if cfg.Bucket == "" {
		return nil, errors.New("blob: S3 store needs a bucket")
	}
	endpoint := cfg.Endpoint
	if endpoint == "" {
		endpoint = "s3.amazonaws.com"
	}
	client, err := minio.New(endpoint, &minio.Options{
		Creds:     s3Credentials(cfg),
		Secure:    !cfg.Insecure,
		Region:    cfg.Region,
		Transport: cfg.Transport,
	})
	if err != nil {
		return nil, fmt.Errorf("blob: S3 client: %w", err)
	}
	partSize := cfg.PartSize
	if partSize == 0 {
		partSize = DefaultS3PartSize
	}
	return &S3{client: client, bucket: cfg.Bucket, prefix: cfg.Prefix, partSize: partSize}, nil
}

func s3Credentials(cfg S3Config) *credentials.Credentials {
	if cfg.AccessKeyID != "" {
		return credentials.NewStaticV4(cfg.AccessKeyID, cfg.SecretAccessKey, cfg.SessionToken)
	}
	return credentials.NewChainCredentials([]credentials.Provider{
		&credentials.EnvAWS{},
		&credentials.EnvMinio{},
		&credentials.FileAWSCredentials{},
		&credentials.FileMinioClient{},
		&credentials.IAM{},
	})
}

// Put uploads r as a multipart upload of PartSize parts, holding one part in
// memory at a time. S3 makes the object visible only when the upload
// completes; a failed upload is aborted.
func (s *S3) Put(ctx context.Context, key string, r io.Reader) (int64, error) {
	name, err := s.objectName(key)
	if err != nil {
		return 0, err
	}
	counter := &countingReader{r: r}
	_, err = s.client.PutObject(ctx, s.bucket, name, counter, -1, minio.PutObjectOptions{
		ContentType: ContentType,
		PartSize:    s.partSize,
	})
	if err != nil {
		return 0, fmt.Errorf("blob: put %s: %w", key, err)
	}
	return counter.n, nil
}

// Open starts a GET of the object, so that a missing object is reported
// here as ErrNotFound rather than on the first Read.
func (s *S3) Open(ctx context.Context, key string) (io.ReadCloser, error) {
	name, err := s.objectName(key)
	if err != nil {
		return nil, err
	}
	obj, err := s.client.GetObject(ctx, s.bucket, name, minio.GetObjectOptions{})
	if err == nil {
		_, err = obj.Stat()
	}
	if err != nil {
		if obj != nil {
			obj.Close()
		}
		return nil, s.wrapError("open", key, err)
	}
	return obj, nil
}

// Delete removes the object; S3 treats a missing object as deleted.
func (s *S3) Delete(ctx context.Context, key string) error {
	name, err := s.objectName(key)
	if err != nil {
		return err
	}
	err = s.client.RemoveObject(ctx, s.bucket, name, minio.RemoveObjectOptions{})
	if err != nil && !isNotFound(err) {
		return fmt.Errorf("blob: delete %s: %w", key, err)
	}
	return nil
}

// URL returns a presigned GET URL of the object valid for ttl. The
// response carries ContentType and an attachment disposition.
func (s *S3) URL(ctx context.Context, key string, ttl time.Duration) (string, error) {
	name, err := s.objectName(key)
	if err != nil {
		return "", err
	}
	if err := validateTTL(ttl); err != nil {
		return "", err
	}
	params := url.Values{
		"response-content-type":        {ContentType},
		"response-content-disposition": {"attachment"},
	}
	u, err := s.client.PresignedGetObject(ctx, s.bucket, name, ttl, params)
	if err != nil {
		return "", fmt.Errorf("blob: presign %s: %w", key, err)
	}
	return u.String(), nil
}

// Check asks the service whether the bucket exists and is accessible. The
// client retries network errors with backoff, so give ctx a deadline.
func (s *S3) Check(ctx context.Context) error {
	exists, err := s.client.BucketExists(ctx, s.bucket)
	if err != nil {
		return fmt.Errorf("%w: bucket %s: %w", ErrUnavailable, s.bucket, err)
	}
	if !exists {
		return fmt.Errorf("%w: bucket %s does not exist", ErrUnavailable, s.bucket)
	}
	return nil
}

func (s *S3) objectName(key string) (string, error) {
	if err := ValidateKey(key); err != nil {
		return "", err
	}
	return s.prefix + key, nil
}

func (s *S3) wrapError(op, key string, err error) error {
	if isNotFound(err) {
		return fmt.Errorf("%w: %s", ErrNotFound, key)
	}
	return fmt.Errorf("blob: %s %s: %w", op, key, err)
}

func isNotFound(err error) bool {
	return minio.ToErrorResponse(err).Code == minio.NoSuchKey
}

// countingReader counts the bytes read through it.
type countingReader struct {
	r io.Reader
	n int64
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	return n, err
}
