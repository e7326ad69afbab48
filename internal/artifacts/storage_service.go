package artifacts

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/store"
)

// recordStorage records where an artifact is stored, in q's transaction
// (rule for 17): on every artifact of the organization with the digest
// whose repository the caller can write (and on one that names no
// repository), and on the artifact of the service repository, which must
// be a repository of the organization that the caller can write (422
// when it is not found, 403 when it cannot be written; it is created
// with the request's name and version when new). When no artifact is
// left, the record goes on the organization's artifact that names no
// repository, created if needed. It returns the records, oldest first.
func recordStorage(ctx context.Context, q store.Q, dialect store.Dialect, p *auth.Principal, org *accounts.Account, s Storage) ([]StorageRecord, error) {
	now := store.Now()
	targets, err := writableArtifacts(ctx, q, p, org.ID, s.Digest)
	if err != nil {
		return nil, err
	}
	repo, cause, err := newRepoResolver(ctx, q, p, org).forWrite(s.ServiceRepository)
	if err != nil {
		return nil, err
	}
	if cause != "" {
		return nil, refusalError(resStorage, []refusal{{field: "service_repository", repo: s.ServiceRepository, cause: cause}})
	}
	if repo != nil || len(targets) == 0 {
		a := newArtifact{Repo: repo, Digest: s.Digest, Name: s.Name, Version: s.Version}
		created, err := ensureArtifacts(ctx, q, dialect, org.ID, []newArtifact{a}, now)
		if err != nil {
			return nil, err
		}
		targets[created[a.key()].ID] = true
	}
	ids := make([]int64, 0, len(targets))
	for id := range targets {
		ids = append(ids, id)
	}
	saved, err := upsertStorageRecords(ctx, q, dialect, ids, s, now)
	if err != nil {
		return nil, err
	}
	all, err := listStorageRecords(ctx, q, org.ID, s.Digest)
	if err != nil {
		return nil, err
	}
	savedIDs := make(map[int64]bool, len(saved))
	for _, r := range saved {
		savedIDs[r.ID] = true
	}
	out := make([]StorageRecord, 0, len(saved))
	for _, r := range all {
		if savedIDs[r.ID] {
			out = append(out, r)
		}
	}
	return out, nil
}

// writableArtifacts returns the ids of the organization's artifacts with
// the digest that the caller may record on: those of repositories it can
// write, and the one that names no repository.
func writableArtifacts(ctx context.Context, q store.Q, p *auth.Principal, orgID int64, digest string) (map[int64]bool, error) {
	arts, err := artifactsWithDigest(ctx, q, orgID, digest)
	if err != nil {
		return nil, err
	}
	roles := map[int64]auth.Role{}
	out := map[int64]bool{}
	for _, a := range arts {
		if a.RepoID == 0 {
			out[a.ID] = true
			continue
		}
		role, err := roleByID(ctx, q, p, a.RepoID, roles)
		if err != nil {
			return nil, err
		}
		if role >= auth.RoleWrite {
			out[a.ID] = true
		}
	}
	return out, nil
}

// readableStorageRecords lists the storage records of the digest in the
// organization that the caller can read (rule for 19): those of
// repositories it can read, and those that name no repository.
func readableStorageRecords(ctx context.Context, q store.Q, p *auth.Principal, orgID int64, digest string) ([]StorageRecord, error) {
	all, err := listStorageRecords(ctx, q, orgID, digest)
	if err != nil {
		return nil, err
	}
	roles := map[int64]auth.Role{}
	out := make([]StorageRecord, 0, len(all))
	for _, r := range all {
		if r.RepositoryID != 0 {
			role, err := roleByID(ctx, q, p, r.RepositoryID, roles)
			if err != nil {
				return nil, err
			}
			if role < auth.RoleRead {
				continue
			}
		}
		out = append(out, r)
	}
	return out, nil
}
