package releases

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/reactions"
	"forgeapi/internal/store"
)

const releaseColumns = `id, repository_id, tag_name, target_commitish, name, body, draft, prerelease, author_id,
	created_at, updated_at, published_at, latest_at`

const assetColumns = `id, release_id, repository_id, name, label, content_type, size, digest, state, download_count,
	uploader_id, blob_key, created_at, updated_at`

// queryReleases reads the releases the clause selects, with their authors
// and assets.
func (s *Service) queryReleases(ctx context.Context, q store.Q, clause string, args ...any) ([]*Release, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+releaseColumns+` FROM releases `+clause, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	var list []*Release
	var authors []*int64
	for rows.Next() {
		r := &Release{}
		var author *int64
		if err := rows.Scan(&r.ID, &r.RepoID, &r.TagName, &r.TargetCommitish, &r.Name, &r.Body, &r.Draft, &r.Prerelease,
			&author, &r.CreatedAt, &r.UpdatedAt, &r.PublishedAt, &r.LatestAt); err != nil {
			rows.Close()
			return nil, store.Normalize(err)
		}
		list, authors = append(list, r), append(authors, author)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	users := userCache{}
	for i, r := range list {
		if r.Author, err = users.get(ctx, q, authors[i]); err != nil {
			return nil, err
		}
	}
	if err := s.loadAssets(ctx, q, list, users); err != nil {
		return nil, err
	}
	ids := make([]int64, len(list))
	for i, r := range list {
		ids[i] = r.ID
	}
	counts, err := reactions.CountsFor(ctx, q, reactions.Release, ids)
	for _, r := range list {
		r.Reactions = counts[r.ID]
	}
	return list, err
}

// loadAssets sets the assets of the releases, in one query.
func (s *Service) loadAssets(ctx context.Context, q store.Q, list []*Release, users userCache) error {
	if len(list) == 0 {
		return nil
	}
	ids := make([]string, len(list))
	byID := make(map[int64]*Release, len(list))
	for i, r := range list {
		ids[i] = strconv.FormatInt(r.ID, 10) // integers: safe to inline
		byID[r.ID] = r
		r.Assets = []*Asset{}
	}
	assets, err := queryAssets(ctx, q, users, `WHERE release_id IN (`+strings.Join(ids, ",")+`) AND state = 'uploaded' ORDER BY id`)
	if err != nil {
		return err
	}
	for _, a := range assets {
		if r := byID[a.ReleaseID]; r != nil {
			r.Assets = append(r.Assets, a)
		}
	}
	return nil
}

// queryAssets reads the assets the clause selects, with their uploaders.
func queryAssets(ctx context.Context, q store.Q, users userCache, clause string, args ...any) ([]*Asset, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+assetColumns+` FROM release_assets `+clause, args...)
	if err != nil {
		return nil, store.Normalize(err)
	}
	var list []*Asset
	var uploaders []*int64
	for rows.Next() {
		a := &Asset{}
		var uploader *int64
		if err := rows.Scan(&a.ID, &a.ReleaseID, &a.RepoID, &a.Name, &a.Label, &a.ContentType, &a.Size, &a.Digest, &a.State,
			&a.DownloadCount, &uploader, &a.BlobKey, &a.CreatedAt, &a.UpdatedAt); err != nil {
			rows.Close()
			return nil, store.Normalize(err)
		}
		list, uploaders = append(list, a), append(uploaders, uploader)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, store.Normalize(err)
	}
	if users == nil {
		users = userCache{}
	}
	for i, a := range list {
		if a.Uploader, err = users.get(ctx, q, uploaders[i]); err != nil {
			return nil, err
		}
	}
	return list, nil
}

// userCache reads each account once per query.
type userCache map[int64]*accounts.Account

// get returns the account id (nil for nil or a deleted account).
func (c userCache) get(ctx context.Context, q store.Q, id *int64) (*accounts.Account, error) {
	if id == nil {
		return nil, nil
	}
	if a, ok := c[*id]; ok {
		return a, nil
	}
	a, err := accounts.ByID(ctx, q, *id)
	if errors.Is(err, store.ErrNotFound) {
		a, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	c[*id] = a
	return a, nil
}

func itoa(n int) string { return strconv.Itoa(n) }
