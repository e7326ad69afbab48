package app

import (
	"context"
	"errors"

	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// reactions is the reactions area's handler.
func (a *App) reactions() *reactions.Handler {
	return &reactions.Handler{Service: &reactions.Service{DB: a.DB}, Subjects: a.reactionSubjects()}
}

// reactionSubjects resolves the subjects of the reactions routes through
// the areas that own them (reactions stands below them and imports none).
// The functions read the App's services when called, so the table also
// serves RouteTable's App without a store.
func (a *App) reactionSubjects() map[reactions.Kind]reactions.SubjectFunc {
	return map[reactions.Kind]reactions.SubjectFunc{
		reactions.Issue: func(ctx context.Context, repo *repos.Repository, number int64) (int64, error) {
			is, err := a.Issues.Get(ctx, repo, number)
			if err != nil {
				return 0, noSubject(err)
			}
			return is.ID, nil
		},
		reactions.IssueComment: func(ctx context.Context, repo *repos.Repository, id int64) (int64, error) {
			c, err := a.Issues.Comment(ctx, repo, id)
			if err != nil {
				return 0, noSubject(err)
			}
			return c.ID, nil
		},
		reactions.ReviewComment: func(ctx context.Context, repo *repos.Repository, id int64) (int64, error) {
			c, _, err := a.Pulls.Comment(ctx, repo, id)
			if err != nil {
				return 0, noSubject(err)
			}
			return c.ID, nil
		},
		reactions.Release: func(ctx context.Context, repo *repos.Repository, id int64) (int64, error) {
			r, err := a.Releases.Get(ctx, repo, id, false)
			if err != nil {
				return 0, noSubject(err)
			}
			return r.ID, nil
		},
		reactions.CommitComment: func(ctx context.Context, repo *repos.Repository, id int64) (int64, error) {
			c, err := a.CommitComments.Get(ctx, repo, id)
			if err != nil {
				return 0, noSubject(err)
			}
			return c.ID, nil
		},
	}
}

// noSubject turns a subject's store.ErrNotFound into
// reactions.ErrNoSubject.
func noSubject(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return reactions.ErrNoSubject
	}
	return err
}
