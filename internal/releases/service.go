package releases

import (
	"context"
	"errors"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// Fields are the settable fields of a release: nil leaves a field as it
// is (on create: its default).
type Fields struct {
	TagName         *string
	TargetCommitish *string
	Name            *string
	Body            *string
	Draft           *bool
	Prerelease      *bool
	// MakeLatest is "true", "false", "legacy" or "" (true for a release
	// being published, nothing otherwise).
	MakeLatest string
}

const zeroSHA = "0000000000000000000000000000000000000000"

// Get returns the repository's release id; drafts only when withDrafts.
// store.ErrNotFound when there is none.
func (s *Service) Get(ctx context.Context, repo *repos.Repository, id int64, withDrafts bool) (*Release, error) {
	return s.one(ctx, s.DB, `WHERE repository_id = $1 AND id = $2`+draftFilter(withDrafts), repo.ID, id)
}

// ByTag returns the repository's published release of the tag.
func (s *Service) ByTag(ctx context.Context, repo *repos.Repository, tag string) (*Release, error) {
	return s.one(ctx, s.DB, `WHERE repository_id = $1 AND tag_name = $2 AND draft = FALSE`, repo.ID, tag)
}

// Latest returns the repository's latest release: of the published
// releases that are not prereleases, the one most recently made latest
// (make_latest true), else the most recently created.
func (s *Service) Latest(ctx context.Context, repo *repos.Repository) (*Release, error) {
	return s.one(ctx, s.DB, `WHERE repository_id = $1 AND draft = FALSE AND prerelease = FALSE
		ORDER BY latest_at IS NULL, latest_at DESC, created_at DESC, id DESC LIMIT 1`, repo.ID)
}

// List returns a page of the repository's releases, newest first (drafts
// only when withDrafts), and whether more follow.
func (s *Service) List(ctx context.Context, repo *repos.Repository, withDrafts bool, page httpapi.Page) ([]*Release, bool, error) {
	list, err := s.queryReleases(ctx, s.DB, `WHERE repository_id = $1`+draftFilter(withDrafts)+
		` ORDER BY created_at DESC, id DESC LIMIT $2 OFFSET $3`, repo.ID, page.Limit()+1, page.Offset())
	if err != nil {
		return nil, false, err
	}
	more := len(list) > page.Limit()
	if more {
		list = list[:page.Limit()]
	}
	return list, more, nil
}

func draftFilter(withDrafts bool) string {
	if withDrafts {
		return ""
	}
	return ` AND draft = FALSE`
}

func (s *Service) one(ctx context.Context, q store.Q, clause string, args ...any) (*Release, error) {
	list, err := s.queryReleases(ctx, q, clause, args...)
	if err != nil {
		return nil, err
	}
	if len(list) == 0 {
		return nil, store.ErrNotFound
	}
	return list[0], nil
}

// Create creates a release of repo by actor from f (TagName required).
// A release that is not a draft is published: its tag is created from
// target_commitish (default: the default branch) when missing, as a push.
// It emits release created, and for a published release published and
// released (or prereleased).
func (s *Service) Create(ctx context.Context, repo *repos.Repository, actor *accounts.Account, f Fields) (*Release, error) {
	if err := validate(f, true); err != nil {
		return nil, err
	}
	r := &Release{RepoID: repo.ID, TagName: *f.TagName, TargetCommitish: repo.DefaultBranch, Name: f.Name, Body: f.Body, Author: actor}
	if f.TargetCommitish != nil && *f.TargetCommitish != "" {
		r.TargetCommitish = *f.TargetCommitish
	}
	r.Draft = f.Draft != nil && *f.Draft
	r.Prerelease = f.Prerelease != nil && *f.Prerelease
	if err := s.tagFree(ctx, repo, r.TagName, 0); err != nil {
		return nil, err
	}
	if !r.Draft {
		if err := s.ensureTag(ctx, repo, actor, r.TagName, r.TargetCommitish); err != nil {
			return nil, err
		}
	}
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		r.CreatedAt, r.UpdatedAt = now, now
		if !r.Draft {
			r.PublishedAt = &now
			if err := s.setLatest(ctx, tx, repo, r, f.MakeLatest, now); err != nil {
				return err
			}
		}
		err := tx.QueryRowContext(ctx, `INSERT INTO releases (repository_id, tag_name, target_commitish, name, body, draft,
			prerelease, author_id, created_at, updated_at, published_at, latest_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9, $10, $11) RETURNING id`,
			repo.ID, r.TagName, r.TargetCommitish, r.Name, r.Body, r.Draft, r.Prerelease, actor.ID, now, r.PublishedAt, r.LatestAt).Scan(&r.ID)
		if errors.Is(store.Normalize(err), store.ErrConflict) {
			return errTagTaken()
		} else if err != nil {
			return store.Normalize(err)
		}
		r.Assets = []*Asset{}
		actions := []string{"created"}
		if !r.Draft {
			actions = append(actions, "published", releasedAction(r))
		}
		return s.emit(ctx, tx, repo, actor, r, nil, actions...)
	})
	if err != nil {
		return nil, err
	}
	return r, nil
}

// Update changes the release id of repo by actor: the fields f sets. A
// draft that f publishes gets its tag as Create does. It emits edited
// when the name, body or tag changed, published (and released or
// prereleased) when it is published, unpublished when it becomes a draft
// again, and prereleased or released when a published release changes
// between the two. edited's changes hold make_latest {to: true} when f
// explicitly makes a published release the latest.
func (s *Service) Update(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64, f Fields) (*Release, error) {
	if err := validate(f, false); err != nil {
		return nil, err
	}
	old, err := s.Get(ctx, repo, id, true)
	if err != nil {
		return nil, err
	}
	r := *old
	if f.TagName != nil {
		r.TagName = *f.TagName
	}
	if f.TargetCommitish != nil && *f.TargetCommitish != "" {
		r.TargetCommitish = *f.TargetCommitish
	}
	if f.Name != nil {
		r.Name = f.Name
	}
	if f.Body != nil {
		r.Body = f.Body
	}
	if f.Draft != nil {
		r.Draft = *f.Draft
	}
	if f.Prerelease != nil {
		r.Prerelease = *f.Prerelease
	}
	if r.TagName != old.TagName {
		if err := s.tagFree(ctx, repo, r.TagName, r.ID); err != nil {
			return nil, err
		}
	}
	if !r.Draft {
		if err := s.ensureTag(ctx, repo, actor, r.TagName, r.TargetCommitish); err != nil {
			return nil, err
		}
	}
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		now := tx.Now()
		r.UpdatedAt = now
		publishing := old.Draft && !r.Draft
		if publishing {
			r.PublishedAt = &now
		} else if r.Draft {
			r.PublishedAt = nil
		}
		if !r.Draft && (publishing || f.MakeLatest != "") {
			if err := s.setLatest(ctx, tx, repo, &r, f.MakeLatest, now); err != nil {
				return err
			}
		}
		_, err := tx.ExecContext(ctx, `UPDATE releases SET tag_name = $1, target_commitish = $2, name = $3, body = $4,
			draft = $5, prerelease = $6, updated_at = $7, published_at = $8, latest_at = $9 WHERE id = $10`,
			r.TagName, r.TargetCommitish, r.Name, r.Body, r.Draft, r.Prerelease, now, r.PublishedAt, r.LatestAt, r.ID)
		if errors.Is(store.Normalize(err), store.ErrConflict) {
			return errTagTaken()
		} else if err != nil {
			return store.Normalize(err)
		}
		changes := changesOf(old, &r)
		if f.MakeLatest == "true" && !publishing && !r.Draft && !r.Prerelease {
			changes["make_latest"] = map[string]any{"to": true} // explicitly made the latest
		}
		var actions []string
		if len(changes) > 0 {
			actions = append(actions, "edited")
		}
		switch {
		case publishing:
			actions = append(actions, "published", releasedAction(&r))
		case !old.Draft && r.Draft:
			actions = append(actions, "unpublished")
		case !r.Draft && old.Prerelease != r.Prerelease:
			actions = append(actions, releasedAction(&r))
		}
		return s.emit(ctx, tx, repo, actor, &r, changes, actions...)
	})
	if err != nil {
		return nil, err
	}
	return &r, nil
}

// Delete deletes the release id of repo and its assets (their bytes once
// the deletion commits); its tag stays. It emits release deleted.
func (s *Service) Delete(ctx context.Context, repo *repos.Repository, actor *accounts.Account, id int64) error {
	r, err := s.Get(ctx, repo, id, true)
	if err != nil {
		return err
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		keys, err := assetKeys(ctx, tx, `WHERE release_id = $1`, r.ID)
		if err != nil {
			return err
		}
		if err := reactions.DeleteFor(ctx, tx, reactions.Release, r.ID); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM releases WHERE id = $1`, r.ID); err != nil {
			return store.Normalize(err)
		}
		s.deleteBlobsAfter(tx, keys)
		return s.emit(ctx, tx, repo, actor, r, nil, "deleted")
	})
}

// releasedAction is the action of a release's publication: released, or
// prereleased.
func releasedAction(r *Release) string {
	if r.Prerelease {
		return "prereleased"
	}
	return "released"
}

// changesOf returns the edited payload's changes: the old name, body and
// tag name of those that changed.
func changesOf(old, r *Release) map[string]any {
	changes := map[string]any{}
	if str(old.Name) != str(r.Name) {
		changes["name"] = map[string]any{"from": str(old.Name)}
	}
	if str(old.Body) != str(r.Body) {
		changes["body"] = map[string]any{"from": str(old.Body)}
	}
	if old.TagName != r.TagName {
		changes["tag_name"] = map[string]any{"from": old.TagName}
	}
	return changes
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

// setLatest applies make_latest to r, being published or updated at now
// in tx: true (or "" on publication) makes it the latest (drafts and
// prereleases never are); false leaves the latest as it is; legacy
// forgets every release's mark, so that the newest one is the latest.
func (s *Service) setLatest(ctx context.Context, tx *store.Tx, repo *repos.Repository, r *Release, makeLatest string, now time.Time) error {
	switch makeLatest {
	case "", "true":
		if !r.Draft && !r.Prerelease {
			r.LatestAt = &now
		}
	case "legacy":
		r.LatestAt = nil
		_, err := tx.ExecContext(ctx, `UPDATE releases SET latest_at = NULL WHERE repository_id = $1`, repo.ID)
		return store.Normalize(err)
	}
	return nil
}

// validate checks f's fields: a tag name (required on create) that is a
// valid reference name, the lengths, make_latest's values.
func validate(f Fields, create bool) error {
	var e apierr.Fields
	switch {
	case f.TagName == nil && create, f.TagName != nil && strings.TrimSpace(*f.TagName) == "":
		e.Add("Release", "tag_name", apierr.CodeMissingField)
	case f.TagName != nil && (len(*f.TagName) > MaxTagName || !gitref.ValidName("refs/tags/"+*f.TagName)):
		e.Add("Release", "tag_name", apierr.CodeInvalid)
	}
	if f.Name != nil {
		e.MaxLength("Release", "name", *f.Name, MaxName)
	}
	if f.Body != nil {
		e.MaxLength("Release", "body", *f.Body, MaxBody)
	}
	switch f.MakeLatest {
	case "", "true", "false", "legacy":
	default:
		e.Add("Release", "make_latest", apierr.CodeInvalid)
	}
	return e.Err()
}

// errTagTaken is the platform's 422 for a second release of a tag.
func errTagTaken() error { return apierr.Invalid("Release", "tag_name", apierr.CodeAlreadyExists) }

// tagFree checks that no release of repo but except has the tag.
func (s *Service) tagFree(ctx context.Context, repo *repos.Repository, tag string, except int64) error {
	var n int
	err := s.DB.QueryRowContext(ctx, `SELECT COUNT(*) FROM releases WHERE repository_id = $1 AND tag_name = $2 AND id <> $3`,
		repo.ID, tag, except).Scan(&n)
	if err != nil {
		return store.Normalize(err)
	}
	if n > 0 {
		return errTagTaken()
	}
	return nil
}

// ensureTag creates refs/tags/tag at the commit target names, as a push
// by actor, unless the tag exists. A target that names no commit is a
// 422 on target_commitish.
func (s *Service) ensureTag(ctx context.Context, repo *repos.Repository, actor *accounts.Account, tag, target string) error {
	g, err := gitread.Open(s.Repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	_, exists, err := g.RefTarget("refs/tags/" + tag)
	if err != nil || exists {
		g.Close()
		return err
	}
	sha, err := g.Resolve(target)
	g.Close()
	if err != nil {
		return apierr.Custom("Release", "target_commitish", "Target commitish %s is invalid", target)
	}
	return s.Git.ServerPush(ctx, repo, actor, []githttp.RefUpdate{{Ref: "refs/tags/" + tag, OldSHA: zeroSHA, NewSHA: sha}})
}

// emit emits the release event for each action, in order, in tx; the
// published action also goes to the feeds as ReleaseEvent.
func (s *Service) emit(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, r *Release,
	changes map[string]any, actions ...string) error {
	base := httpapi.BaseURL(ctx)
	for _, action := range actions {
		payload := map[string]any{"action": action, "release": toJSON(base, repo, r)}
		e := &events.Event{HookEvent: "release", HookPayload: payload, Actor: actor, Repo: repo, Public: !repo.Private}
		if action == "edited" {
			payload["changes"] = changes
		}
		if action == "published" {
			e.FeedType, e.FeedPayload = "ReleaseEvent", map[string]any{"action": action, "release": toJSON(base, repo, r)}
		}
		if err := s.Events.Emit(ctx, tx, e); err != nil {
			return err
		}
	}
	return nil
}

// ByTagName returns the repository's release of the tag, drafts too when
// withDrafts (GraphQL's Repository.release).
func (s *Service) ByTagName(ctx context.Context, repo *repos.Repository, tag string, withDrafts bool) (*Release, error) {
	return s.one(ctx, s.DB, `WHERE repository_id = $1 AND tag_name = $2`+draftFilter(withDrafts), repo.ID, tag)
}

// All returns up to limit of the repository's releases, newest first
// (drafts only when withDrafts).
func (s *Service) All(ctx context.Context, repo *repos.Repository, withDrafts bool, limit int) ([]*Release, error) {
	list, _, err := s.List(ctx, repo, withDrafts, httpapi.Page{Page: 1, PerPage: limit})
	return list, err
}

// HTMLURL is the web page of the release (a draft's is under
// untagged-{id}, as on the platform); base is the API's base URL.
func HTMLURL(base string, repo *repos.Repository, r *Release) string {
	tag := pathEscapeTag(r.TagName)
	if r.Draft {
		tag = "untagged-" + wire.Itoa(r.ID)
	}
	return httpapi.WebBase(base) + "/" + repo.FullName() + "/releases/tag/" + tag
}

// RepositoryOf returns the id of the repository of the release id;
// store.ErrNotFound when there is none.
func (s *Service) RepositoryOf(ctx context.Context, id int64) (int64, error) {
	var repoID int64
	err := s.DB.QueryRowContext(ctx, `SELECT repository_id FROM releases WHERE id = $1`, id).Scan(&repoID)
	return repoID, store.Normalize(err)
}
