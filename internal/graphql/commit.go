package graphql

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// gitObjectID is the GitObjectID scalar: a git object's hex name.
type gitObjectID string

// ImplementsGraphQLType reports that gitObjectID is GitObjectID.
func (gitObjectID) ImplementsGraphQLType(name string) bool { return name == "GitObjectID" }

// UnmarshalGraphQL reads a GitObjectID argument.
func (g *gitObjectID) UnmarshalGraphQL(input any) error {
	s, ok := input.(string)
	if !ok {
		return fmt.Errorf("GitObjectID: want a string, got %T", input)
	}
	*g = gitObjectID(s)
	return nil
}

// commitResolver resolves Commit: its oid at once, the rest read from
// git once when asked.
type commitResolver struct {
	h    *Handler
	repo *repos.Repository
	sha  string

	once sync.Once
	c    gitread.Commit
	err  error
}

// load reads the commit once.
func (r *commitResolver) load() (gitread.Commit, error) {
	r.once.Do(func() {
		g, err := gitread.Open(r.h.Repos.GitDir(r.repo.ID))
		if err != nil {
			r.err = err
			return
		}
		defer g.Close()
		r.c, r.err = g.CommitObject(r.sha)
	})
	return r.c, r.err
}

func (r *commitResolver) Oid() gitObjectID       { return gitObjectID(r.sha) }
func (r *commitResolver) AbbreviatedOid() string { return r.sha[:min(7, len(r.sha))] }

// URL is the commit's web page.
func (r *commitResolver) URL(ctx context.Context) uri {
	return uri(repoWebURL(ctx, r.repo) + "/commit/" + r.sha)
}

// Message is the commit's whole message.
func (r *commitResolver) Message() (string, error) {
	c, err := r.load()
	return strings.TrimRight(c.Message, "\n"), err
}

// MessageHeadline is the first line of the message.
func (r *commitResolver) MessageHeadline() (string, error) {
	msg, err := r.Message()
	headline, _, _ := strings.Cut(msg, "\n")
	return headline, err
}

// MessageBody is the message after its headline and blank line.
func (r *commitResolver) MessageBody() (string, error) {
	msg, err := r.Message()
	_, body, _ := strings.Cut(msg, "\n")
	return strings.TrimLeft(body, "\n"), err
}

// AuthoredDate is the author's date.
func (r *commitResolver) AuthoredDate() (dateTime, error) {
	c, err := r.load()
	return at(c.AuthorDate), err
}

// CommittedDate is the committer's date.
func (r *commitResolver) CommittedDate() (dateTime, error) {
	c, err := r.load()
	return at(c.CommitterDate), err
}

// gitActorResolver resolves GitActor: a commit's author or committer.
type gitActorResolver struct {
	h           *Handler
	name, email string
	date        time.Time // zero when not known
}

func (r *gitActorResolver) Name() *string  { return optional(r.name) }
func (r *gitActorResolver) Email() *string { return optional(r.email) }

// User is the user of the actor's email address, null when none.
func (r *gitActorResolver) User(ctx context.Context) (*userResolver, error) {
	a, err := accounts.ByEmail(ctx, r.h.DB, r.email)
	if errors.Is(err, store.ErrNotFound) || err == nil && a.IsOrg() {
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	return &userResolver{r.h.account(a)}, nil
}

// repoWebURL is the web page of the repository.
func repoWebURL(ctx context.Context, repo *repos.Repository) string {
	return string((&repositoryResolver{r: repo}).URL(ctx))
}
