// Package releases serves releases and their assets: create, read,
// update, delete and list releases (drafts shown to writers only), the
// latest release (make_latest true, false or legacy), a release by its
// tag, generated release notes; assets uploaded at the release's
// upload_url and streamed into the blob store, listed, renamed and
// deleted, and downloaded through browser_download_url or through the
// asset API with Accept: application/octet-stream (a 302 to a signed,
// short-lived URL). Publishing a release whose tag does not exist creates
// the tag from target_commitish as a server push (githost.ServerPush:
// push checks, events). Every change emits the release webhook event and
// the feeds' ReleaseEvent in its transaction.
package releases

import (
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/blob"
	"forgeapi/internal/events"
	"forgeapi/internal/githost"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// DefaultMaxAssetSize is the largest asset an upload may send when
// Service.MaxAssetSize is 0: 2 GiB, the platform's limit.
const DefaultMaxAssetSize = 2 << 30

// DownloadURLTTL is how long the signed URL that the asset API redirects
// to stays valid.
const DownloadURLTTL = 5 * time.Minute

// Limits of a release's fields, in characters, as the platform's.
const (
	MaxTagName = 255
	MaxName    = 1024
	MaxBody    = 125000
	MaxLabel   = 1024
)

// Release is one release of a repository. Name and Body are nil when
// not given; PublishedAt is nil for a draft.
type Release struct {
	ID              int64
	RepoID          int64
	TagName         string
	TargetCommitish string
	Name            *string
	Body            *string
	Draft           bool
	Prerelease      bool
	Author          *accounts.Account // nil once the account is gone
	CreatedAt       time.Time
	UpdatedAt       time.Time
	PublishedAt     *time.Time
	LatestAt        *time.Time
	Assets          []*Asset
	// Reactions are the release's reactions by content.
	Reactions reactions.Counts
}

// Asset is a file of a release. State is "open" while its upload runs,
// then "uploaded"; Digest is "sha256:HEX" of its bytes.
type Asset struct {
	ID            int64
	ReleaseID     int64
	RepoID        int64
	Name          string
	Label         *string
	ContentType   string
	Size          int64
	Digest        *string
	State         string
	DownloadCount int64
	Uploader      *accounts.Account
	BlobKey       string
	CreatedAt     time.Time
	UpdatedAt     time.Time
}

// Service stores releases and assets and emits their events.
type Service struct {
	DB     *store.DB
	Events *events.Bus
	Repos  *repos.Service
	// Git moves the references of releases' new tags as pushes.
	Git *githost.Handler
	// Blobs holds the assets' bytes; set once the server knows its base
	// URL (app.Main.openBlobs).
	Blobs blob.Store
	// SigningKey signs the download URLs of a local blob store (at least
	// 32 bytes).
	SigningKey []byte
	// MaxAssetSize is the largest asset accepted, in bytes; 0 means
	// DefaultMaxAssetSize.
	MaxAssetSize int64
	// Now is the clock of URL expiry; nil means time.Now.
	Now func() time.Time
}

// MaxAsset is the largest asset an upload may send.
func (s *Service) MaxAsset() int64 {
	if s == nil || s.MaxAssetSize <= 0 {
		return DefaultMaxAssetSize
	}
	return s.MaxAssetSize
}

func (s *Service) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}
