package releases

import (
	"context"
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"strconv"
	"strings"
	"unicode"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/blob"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// SignedPathPrefix is the path, on the web root, of the signed download
// URLs the asset API redirects to when the blob store is local.
const SignedPathPrefix = "/_release-assets/"

// Upload is one asset being uploaded: its name and label (from the
// upload URL's query), its media type (the request's Content-Type) and
// its bytes.
type Upload struct {
	Name        string
	Label       *string
	ContentType string
	Body        io.Reader
}

// Asset returns the repository's asset id; store.ErrNotFound when there
// is none, or when it belongs to a draft and withDrafts is false.
func (s *Service) Asset(ctx context.Context, repo *repos.Repository, id int64, withDrafts bool) (*Asset, *Release, error) {
	list, err := queryAssets(ctx, s.DB, nil, `WHERE repository_id = $1 AND id = $2`, repo.ID, id)
	if err != nil {
		return nil, nil, err
	}
	if len(list) == 0 {
		return nil, nil, store.ErrNotFound
	}
	r, err := s.Get(ctx, repo, list[0].ReleaseID, withDrafts)
	if err != nil {
		return nil, nil, err
	}
	return list[0], r, nil
}

// Assets returns a page of the release's assets, oldest first (those
// still uploading too), and whether more follow.
func (s *Service) Assets(ctx context.Context, r *Release, page httpapi.Page) ([]*Asset, bool, error) {
	list, err := queryAssets(ctx, s.DB, nil, `WHERE release_id = $1 ORDER BY id LIMIT $2 OFFSET $3`, r.ID, page.Limit()+1, page.Offset())
	if err != nil {
		return nil, false, err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	return list, more, nil
}

// AssetByName returns the uploaded asset of the release with the name.
func (s *Service) AssetByName(ctx context.Context, r *Release, name string) (*Asset, error) {
	list, err := queryAssets(ctx, s.DB, nil, `WHERE release_id = $1 AND name = $2 AND state = 'uploaded'`, r.ID, name)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// ReleaseByDownloadTag returns the release that a browser download URL's
// tag names: a published release's tag, or untagged-{id} for a draft
// (withDrafts only).
func (s *Service) ReleaseByDownloadTag(ctx context.Context, repo *repos.Repository, tag string, withDrafts bool) (*Release, error) {
	if id, ok := strings.CutPrefix(tag, "untagged-"); ok && withDrafts {
		if n, err := strconv.ParseInt(id, 10, 64); err == nil {
			if r, err := s.Get(ctx, repo, n, true); err == nil && r.Draft {
				return r, nil
			}
		}
	}
	return s.ByTag(ctx, repo, tag)
}

// DownloadPath returns the API path (escaped) of the asset that a
// browser download address names: /{owner}/{repo}/releases/download/
// {tag}/{name} is /repos/{owner}/{repo}/releases/assets/{id} (the tag may
// hold slashes; a draft's is untagged-{id}). The web address is served
// as that path with Accept: application/octet-stream (the API's access
// rules, its 302 to the bytes); a path that names no asset is that of
// asset 0, which the API answers 404 once it has checked the caller's
// access, so that the answer tells nothing of private repositories. ok
// is false when rest is not releases/download/{tag}/{name}.
func (s *Service) DownloadPath(ctx context.Context, owner, repo, rest string) (path string, ok bool, err error) {
	rest, ok = strings.CutPrefix(rest, "releases/download/")
	i := strings.LastIndexByte(rest, '/')
	if !ok || i <= 0 || i == len(rest)-1 {
		return "", false, nil
	}
	path = "/repos/" + url.PathEscape(owner) + "/" + url.PathEscape(repo) + "/releases/assets/"
	id, err := s.assetAt(ctx, owner, repo, rest[:i], rest[i+1:])
	return path + wire.Itoa(id), true, err
}

// assetAt returns the id of the uploaded asset name of the release of tag
// (or untagged-{id}) in owner/repo; 0 when there is none.
func (s *Service) assetAt(ctx context.Context, owner, name, tag, asset string) (int64, error) {
	repo, err := repos.ByOwnerAndName(ctx, s.DB, owner, name)
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	} else if err != nil {
		return 0, err
	}
	rel, err := s.ReleaseByDownloadTag(ctx, repo, tag, true)
	if err == nil {
		var a *Asset
		if a, err = s.AssetByName(ctx, rel, asset); err == nil {
			return a.ID, nil
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		return 0, nil
	}
	return 0, err
}

// Upload stores an asset of release r uploaded by actor: it reserves the
// name (a second asset of one name is a 422 already_exists), streams the
// bytes into the blob store while hashing them (sha256 digest), and marks
// the asset uploaded. When the upload fails, the asset and its bytes are
// removed. A body longer than the limit fails with *http.MaxBytesError
// from the reader the caller gave.
func (s *Service) Upload(ctx context.Context, repo *repos.Repository, r *Release, actor *accounts.Account, up Upload) (*Asset, error) {
	if err := validAssetName("ReleaseAsset", up.Name); err != nil {
		return nil, err
	}
	if up.ContentType == "" {
		up.ContentType = "application/octet-stream"
	}
	now := store.Now()
	a := &Asset{ReleaseID: r.ID, RepoID: repo.ID, Name: up.Name, Label: up.Label, ContentType: up.ContentType, State: "open",
		Uploader: actor, BlobKey: newBlobKey(repo.ID), CreatedAt: now, UpdatedAt: now}
	err := s.DB.QueryRowContext(ctx, `INSERT INTO release_assets (release_id, repository_id, name, label, content_type, state,
		uploader_id, blob_key, created_at, updated_at) VALUES ($1, $2, $3, $4, $5, 'open', $6, $7, $8, $8) RETURNING id`,
		r.ID, repo.ID, a.Name, a.Label, a.ContentType, actor.ID, a.BlobKey, now).Scan(&a.ID)
	if errors.Is(store.Normalize(err), store.ErrConflict) {
		return nil, apierr.Invalid("ReleaseAsset", "name", apierr.CodeAlreadyExists)
	} else if err != nil {
		return nil, store.Normalize(err)
	}
	if err := s.store(ctx, a, up.Body); err != nil {
		cleanup := context.WithoutCancel(ctx)
		_, _ = s.DB.ExecContext(cleanup, `DELETE FROM release_assets WHERE id = $1`, a.ID)
		_ = s.Blobs.Delete(cleanup, a.BlobKey)
		return nil, err
	}
	return a, nil
}

// store streams body into the asset's blob and marks it uploaded with
// its size and digest.
func (s *Service) store(ctx context.Context, a *Asset, body io.Reader) error {
	h := sha256.New()
	size, err := s.Blobs.Put(ctx, a.BlobKey, io.TeeReader(body, h))
	if err != nil {
		return err
	}
	digest := "sha256:" + hex.EncodeToString(h.Sum(nil))
	a.Size, a.Digest, a.State, a.UpdatedAt = size, &digest, "uploaded", store.Now()
	_, err = s.DB.ExecContext(ctx, `UPDATE release_assets SET size = $1, digest = $2, state = 'uploaded', updated_at = $3 WHERE id = $4`,
		a.Size, digest, a.UpdatedAt, a.ID)
	return store.Normalize(err)
}

// UpdateAsset changes the asset's name, label and state (only
// "uploaded" is accepted) where they are not nil.
func (s *Service) UpdateAsset(ctx context.Context, a *Asset, name, label, state *string) (*Asset, error) {
	if name != nil {
		if err := validAssetName("ReleaseAsset", *name); err != nil {
			return nil, err
		}
		a.Name = *name
	}
	if label != nil {
		var f apierr.Fields
		f.MaxLength("ReleaseAsset", "label", *label, MaxLabel)
		if err := f.Err(); err != nil {
			return nil, err
		}
		a.Label = label
	}
	if state != nil && *state != "uploaded" {
		return nil, apierr.Invalid("ReleaseAsset", "state", apierr.CodeInvalid)
	}
	a.UpdatedAt = store.Now()
	_, err := s.DB.ExecContext(ctx, `UPDATE release_assets SET name = $1, label = $2, updated_at = $3 WHERE id = $4`,
		a.Name, a.Label, a.UpdatedAt, a.ID)
	if errors.Is(store.Normalize(err), store.ErrConflict) {
		return nil, apierr.Invalid("ReleaseAsset", "name", apierr.CodeAlreadyExists)
	}
	return a, store.Normalize(err)
}

// DeleteAsset deletes the asset and, once that commits, its bytes.
func (s *Service) DeleteAsset(ctx context.Context, a *Asset) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if _, err := tx.ExecContext(ctx, `DELETE FROM release_assets WHERE id = $1`, a.ID); err != nil {
			return store.Normalize(err)
		}
		s.deleteBlobsAfter(tx, []string{a.BlobKey})
		return nil
	})
}

// RepositoryDeleting is a repos.Service BeforeDelete hook: the bytes of
// the repository's assets are deleted once the repository's deletion
// commits (the rows go with it).
func (s *Service) RepositoryDeleting(ctx context.Context, tx *store.Tx, r *repos.Repository, _ *accounts.Account) error {
	keys, err := assetKeys(ctx, tx, `WHERE repository_id = $1`, r.ID)
	if err != nil {
		return err
	}
	s.deleteBlobsAfter(tx, keys)
	return nil
}

// assetKeys returns the blob keys of the assets the clause selects.
func assetKeys(ctx context.Context, q store.Q, clause string, args ...any) ([]string, error) {
	rows, err := q.QueryContext(ctx, `SELECT blob_key FROM release_assets `+clause, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	defer rows.Close()
	var keys []string
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, store.Normalize(err)
		}
		keys = append(keys, k)
	}
	return keys, store.Normalize(rows.Err())
}

// deleteBlobsAfter deletes the blobs once tx commits. A blob whose
// deletion fails is logged and left (no row names it any more).
func (s *Service) deleteBlobsAfter(tx *store.Tx, keys []string) {
	if len(keys) == 0 || s.Blobs == nil {
		return
	}
	tx.AfterCommit(func() {
		for _, k := range keys {
			if err := s.Blobs.Delete(context.Background(), k); err != nil {
				slog.Error("delete a release asset's bytes", "key", k, "err", err)
			}
		}
	})
}

// CountDownload adds one to the asset's download count.
func (s *Service) CountDownload(ctx context.Context, a *Asset) error {
	_, err := s.DB.ExecContext(ctx, `UPDATE release_assets SET download_count = download_count + 1 WHERE id = $1`, a.ID)
	return store.Normalize(err)
}

// Open returns a reader of the asset's bytes; the caller closes it.
func (s *Service) Open(ctx context.Context, a *Asset) (io.ReadCloser, error) {
	return s.Blobs.Open(ctx, a.BlobKey)
}

// DownloadURL returns a URL that serves the asset's bytes without
// credentials for DownloadURLTTL: the blob store's presigned URL, or,
// for a local store, a URL under SignedPathPrefix that the server signs
// and serves (ServeSigned); base is the API's base URL.
func (s *Service) DownloadURL(ctx context.Context, base string, a *Asset) (string, error) {
	if _, local := s.Blobs.(*blob.Local); !local {
		return s.Blobs.URL(ctx, a.BlobKey, DownloadURLTTL)
	}
	expires := s.now().Add(DownloadURLTTL).Unix()
	q := url.Values{"expires": {strconv.FormatInt(expires, 10)}, "signature": {hex.EncodeToString(s.sign(a.ID, expires))}}
	return httpapi.WebBase(base) + SignedPathPrefix + wire.Itoa(a.ID) + "/" + url.PathEscape(a.Name) + "?" + q.Encode(), nil
}

// CheckSignature reports whether the query's expiry and signature are
// DownloadURL's for the asset id and the expiry has not passed.
func (s *Service) CheckSignature(id int64, query url.Values) bool {
	expires, err := strconv.ParseInt(query.Get("expires"), 10, 64)
	if err != nil {
		return false
	}
	sig, err := hex.DecodeString(query.Get("signature"))
	return err == nil && hmac.Equal(sig, s.sign(id, expires)) && s.now().Unix() <= expires
}

// AssetByID returns the asset id of any repository (for a signed URL,
// which names no repository).
func (s *Service) AssetByID(ctx context.Context, id int64) (*Asset, error) {
	list, err := queryAssets(ctx, s.DB, nil, `WHERE id = $1 AND state = 'uploaded'`, id)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

func (s *Service) sign(id int64, expires int64) []byte {
	m := hmac.New(sha256.New, s.SigningKey)
	fmt.Fprintf(m, "release-asset\n%d\n%d", id, expires)
	return m.Sum(nil)
}

// newBlobKey returns a fresh blob key for an asset of the repository.
func newBlobKey(repoID int64) string {
	var b [16]byte
	_, _ = rand.Read(b[:])
	return "release-assets/" + wire.Itoa(repoID) + "/" + hex.EncodeToString(b[:])
}

// validAssetName checks an asset's file name: 1 to 255 characters, no
// slash or control character.
func validAssetName(resource, name string) error {
	if name == "" {
		return apierr.Invalid(resource, "name", apierr.CodeMissingField)
	}
	if len(name) > 255 || name == "." || name == ".." || strings.ContainsFunc(name, func(r rune) bool {
		return r == '/' || r == '\\' || unicode.IsControl(r)
	}) {
		return apierr.Invalid(resource, "name", apierr.CodeInvalid)
	}
	return nil
}
