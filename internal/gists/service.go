package gists

import (
	"context"
	"errors"
	"os"
	"sort"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/events"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/store"
)

// NewGist is what POST /gists creates: Files maps file names to contents.
type NewGist struct {
	Files       map[string]string
	Description *string
	Public      bool
}

// Create makes the gist's repository with one commit of its files, then
// its row. A failure leaves neither.
func (s *Service) Create(ctx context.Context, owner *accounts.Account, n NewGist) (*Gist, error) {
	if len(n.Files) == 0 {
		return nil, apierr.Invalid("Gist", "files", apierr.CodeMissingField)
	}
	names := make([]string, 0, len(n.Files))
	for name := range n.Files {
		names = append(names, name)
	}
	sort.Strings(names)
	edits := make([]fileEdit, 0, len(names))
	for _, name := range names {
		if err := checkFilename(name); err != nil {
			return nil, err
		}
		content := n.Files[name]
		if content == "" {
			return nil, apierr.Custom("Gist", "files", "file %q has no content", name)
		}
		edits = append(edits, fileEdit{Name: name, Content: &content})
	}
	now := s.now()
	g := &Gist{Name: newName(), Owner: owner, Description: n.Description, Public: n.Public, CreatedAt: now, UpdatedAt: now}
	return g, s.createWith(ctx, g, actionCreate, func(dir string) error {
		_, err := commit(ctx, dir, "refs/heads/"+Branch, "", edits, owner, s.Sign)
		return err
	})
}

// createWith makes the gist's repository, fills it with fill, and
// inserts its row with the GistEvent of action (none for ""); on any
// failure it removes the repository.
func (s *Service) createWith(ctx context.Context, g *Gist, action string, fill func(dir string) error) (err error) {
	dir := s.Dir(g.Name)
	defer func() {
		if err != nil {
			_ = os.RemoveAll(dir)
		}
	}()
	if err := initRepo(dir); err != nil {
		return err
	}
	if err := fill(dir); err != nil {
		return err
	}
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := insert(ctx, tx, g); err != nil {
			return err
		}
		return s.emit(ctx, tx, g, g.Owner, action)
	})
}

// Update is what PATCH /gists/{gist_id} changes: the description when
// set, and the files named (see fileEdit).
type Update struct {
	Description *string
	Files       []fileEdit
}

// Edit commits the update's file changes as one commit by the actor (no
// commit when they change nothing; a commit counts for maintenance) and
// saves the description. The
// handler checks that the actor owns the gist.
func (s *Service) Edit(ctx context.Context, g *Gist, actor *accounts.Account, u Update) (*Gist, error) {
	dir := s.Dir(g.Name)
	changed, commits := false, 0
	if len(u.Files) > 0 {
		ref, err := headRef(ctx, dir)
		if err != nil {
			return nil, err
		}
		parent, err := head(dir)
		if err != nil {
			return nil, err
		}
		sha, err := commit(ctx, dir, ref, parent, u.Files, actor, s.Sign)
		if err != nil {
			return nil, err
		}
		if sha != "" {
			changed, commits = true, 1
		}
	}
	if u.Description != nil {
		g.Description = u.Description
		changed = true
	}
	if !changed {
		return g, nil
	}
	g.UpdatedAt = s.now()
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		_, err := tx.ExecContext(ctx, `UPDATE gists SET description = $1, updated_at = $2, changes_since = changes_since + $3
			WHERE id = $4`, g.Description, g.UpdatedAt, commits, g.ID)
		if err != nil {
			return err
		}
		return s.emit(ctx, tx, g, actor, actionUpdate)
	})
	return g, err
}

// Fork makes the user a copy of the gist with its whole history. A user
// forks neither their own gist (422) nor one they forked already (422).
func (s *Service) Fork(ctx context.Context, src *Gist, user *accounts.Account) (*Gist, error) {
	if src.Owner.ID == user.ID {
		return nil, apierr.Custom("Gist", "forks", "You cannot fork your own gist.")
	}
	var one int
	err := store.Normalize(s.DB.QueryRowContext(ctx, `SELECT 1 FROM gists WHERE fork_of_id = $1 AND owner_id = $2`, src.ID, user.ID).Scan(&one))
	if err == nil {
		return nil, apierr.Custom("Gist", "forks", "You have already forked this gist.")
	}
	if !errors.Is(err, store.ErrNotFound) {
		return nil, err
	}
	now := s.now()
	g := &Gist{Name: newName(), Owner: user, Description: src.Description, Public: src.Public, ForkOfID: src.ID,
		CreatedAt: now, UpdatedAt: now}
	return g, s.createWith(ctx, g, "", func(dir string) error {
		return gitcmd.In(dir).Run(ctx, "fetch", "--quiet", "--no-tags", s.Dir(src.Name), "+refs/heads/*:refs/heads/*")
	})
}

// The actions of the platform's historical GistEvent.
const (
	actionCreate = "create"
	actionUpdate = "update"
)

// emit records the GistEvent of action (none for "") by actor on the
// public gist g in tx, when the service has an events bus: its payload
// the action and the gist as lists show it (its files without content,
// under the request's base URL). A secret gist makes no event.
func (s *Service) emit(ctx context.Context, tx *store.Tx, g *Gist, actor *accounts.Account, action string) error {
	if s.Events == nil || action == "" || !g.Public {
		return nil
	}
	files, err := Files(s.Dir(g.Name), "HEAD", false)
	if err != nil {
		return err
	}
	counts, err := CommentCounts(ctx, tx, []*Gist{g})
	if err != nil {
		return err
	}
	j := toJSON(httpapi.BaseURL(ctx), g, files, counts[g.ID])
	return s.Events.Emit(ctx, tx, &events.Event{FeedType: "GistEvent", FeedPayload: map[string]any{"action": action, "gist": &j},
		Actor: actor, Public: true, CreatedAt: g.UpdatedAt})
}
