package blob

import (
	"fmt"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
	"time"
)

// Options carry what Open needs besides the spec.
type Options struct {
	// Dir is the directory of the local backend when the spec is empty,
	// normally a folder of the server's data directory.
	Dir string
	// BaseURL and SigningKey configure the local backend's signed URLs;
	// see LocalConfig.
	BaseURL    string
	SigningKey []byte
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Getenv looks up AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and
	// AWS_SESSION_TOKEN for the S3 backend; nil means os.Getenv. When it
	// finds no access key, the S3 backend falls back to the credential
	// chain of minio-go (see S3Config).
	Getenv func(string) string
	// S3Transport is the HTTP transport of the S3 backend; nil means the
	// default.
	S3Transport http.RoundTripper
}

// Open builds the Store that spec names:
//
//   - "" — a Local store in opts.Dir;
//   - "file://PATH" — a Local store in PATH ("file:///var/blobs" is
//     absolute, "file://blobs" relative to the working directory);
//   - "s3://BUCKET?endpoint=HOST:PORT&region=R&secure=false&prefix=P" — an
//     S3 store; every parameter is optional: endpoint defaults to AWS,
//     secure to true, prefix to none.
//
// Open fails on any other spec, on unknown S3 parameters, and when the
// local backend lacks a directory, a base URL or a signing key. It does
// not contact S3; call Check to know whether the store is usable.
func Open(spec string, opts Options) (Store, error) {
	switch {
	case spec == "":
		return openLocal(opts.Dir, opts)
	case strings.HasPrefix(spec, "file://"):
		return openLocal(strings.TrimPrefix(spec, "file://"), opts)
	case strings.HasPrefix(spec, "s3://"):
		cfg, err := parseS3Spec(spec, opts)
		if err != nil {
			return nil, err
		}
		return NewS3(cfg)
	default:
		return nil, fmt.Errorf("blob: unsupported storage spec %q: want file://PATH or s3://BUCKET?...", redactSpec(spec))
	}
}

func openLocal(dir string, opts Options) (Store, error) {
	return NewLocal(LocalConfig{Dir: dir, BaseURL: opts.BaseURL, SigningKey: opts.SigningKey, Now: opts.Now})
}

// parseS3Spec turns "s3://bucket?endpoint=...&region=...&secure=...&prefix=..."
// into an S3Config with credentials from opts.Getenv.
func parseS3Spec(spec string, opts Options) (S3Config, error) {
	u, err := url.Parse(spec)
	if err != nil || u.Host == "" || (u.Path != "" && u.Path != "/") || u.User != nil {
		return S3Config{}, fmt.Errorf("blob: S3 spec %q: want s3://BUCKET?endpoint=HOST:PORT&region=R&secure=BOOL&prefix=P", redactSpec(spec))
	}
	cfg := S3Config{Bucket: u.Host, Transport: opts.S3Transport}
	for name, values := range u.Query() {
		value := values[len(values)-1]
		switch name {
		case "endpoint":
			cfg.Endpoint = value
		case "region":
			cfg.Region = value
		case "prefix":
			cfg.Prefix = value
		case "secure":
			secure, err := strconv.ParseBool(value)
			if err != nil {
				return S3Config{}, fmt.Errorf("blob: S3 spec: secure=%q is not a boolean", value)
			}
			cfg.Insecure = !secure
		default:
			return S3Config{}, fmt.Errorf("blob: S3 spec: unknown parameter %q (known: endpoint, region, secure, prefix)", name)
		}
	}
	getenv := opts.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg.AccessKeyID = getenv("AWS_ACCESS_KEY_ID")
	cfg.SecretAccessKey = getenv("AWS_SECRET_ACCESS_KEY")
	cfg.SessionToken = getenv("AWS_SESSION_TOKEN")
	return cfg, nil
}

// redactSpec drops any user information from spec, so that a secret put
// there by mistake does not reach logs through an error message.
func redactSpec(spec string) string {
	u, err := url.Parse(spec)
	if err != nil {
		return "(unparsable)"
	}
	if u.User != nil {
		u.User = url.User("REDACTED")
	}
	return u.String()
}
