package app

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"fmt"
	"path/filepath"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/blob"
	"forgeapi/internal/orgmigration"
	"forgeapi/internal/releases"
	"forgeapi/internal/repos"
	"forgeapi/internal/secretbox"
	"forgeapi/internal/store"
)

// blobSigningKeyFile holds, under the data directory, the key that signs
// the local blob store's download URLs. It is created on first start;
// servers sharing a data directory share it.
const blobSigningKeyFile = "blob-signing.key"

// openBlobs opens the migration archive store named by Config.Blob and
// hands it to the migrations service. It returns the store when it is the
// local backend, whose signed URLs the server itself serves at
// GET /_blobs/{key} (archive keys hold no '/', so that route does not
// overlap git's /{owner}/{repo}/info/refs). Those URLs are on the web
// root of the base URL (accounts.WebBase: without /api/v3), where the
// server serves them, as it serves git, and not under /api/v3.
func (m *Main) openBlobs() (*blob.Local, error) {
	cfg := m.App.Config
	opts := cfg.BlobOptions
	if opts.Dir == "" {
		opts.Dir = filepath.Join(cfg.DataDir, "blobs")
	}
	if opts.BaseURL == "" {
		opts.BaseURL = accounts.WebBase(m.baseURL)
	}
	if opts.Now == nil {
		opts.Now = cfg.Now
	}
	if opts.SigningKey == nil && !isS3(cfg.Blob) {
		key, err := secretbox.LoadOrCreateKey(filepath.Join(cfg.DataDir, blobSigningKeyFile))
		if err != nil {
			return nil, fmt.Errorf("blob signing key: %w", err)
		}
		opts.SigningKey = key
	}
	store, err := blob.Open(cfg.Blob, opts)
	if err != nil {
		return nil, err
	}
	m.App.Migrations.Blobs = store
	m.App.Releases.Blobs = store
	m.App.Actions.Blobs = store
	local, _ := store.(*blob.Local)
	return local, nil
}

func isS3(spec string) bool { return strings.HasPrefix(spec, "s3://") }

// migrationExporter returns the export job of organization migrations.
func (m *Main) migrationExporter() *orgmigration.Exporter {
	return orgmigration.NewExporter(m.App.Migrations, orgmigration.ExporterConfig{
		BaseURL: m.baseURL,
		TempDir: filepath.Join(m.App.Config.DataDir, "tmp", "migrations"),
	})
}

// newReleases builds the releases service of a: its download URLs
// signed with a key derived from the server's secret key, the bytes of a
// deleted repository's assets removed with it (Repos.BeforeDelete).
func newReleases(a *App, serverKey []byte) *releases.Service {
	mac := hmac.New(sha256.New, serverKey)
	mac.Write([]byte("forgeapi release asset download URLs"))
	s := &releases.Service{DB: a.DB, Events: a.Events, Repos: a.Repos, Git: a.Git, SigningKey: mac.Sum(nil),
		MaxAssetSize: a.Config.MaxAssetSize, Now: a.Config.Now}
	before := a.Repos.BeforeDelete
	a.Repos.BeforeDelete = func(ctx context.Context, tx *store.Tx, r *repos.Repository, actor *accounts.Account) error {
		if err := s.RepositoryDeleting(ctx, tx, r, actor); err != nil {
			return err
		}
		if before == nil {
			return nil
		}
		return before(ctx, tx, r, actor)
	}
	return s
}
