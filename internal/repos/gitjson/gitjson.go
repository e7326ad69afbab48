// Package gitjson renders git objects as the platform's JSON: commits
// with their authors matched to accounts by email. Areas that show
// commits (contents and branches, commit statuses, webhooks) share it.
package gitjson

import (
	"context"
	"encoding/base64"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// SHAURL is a {sha, url} reference.
type SHAURL struct {
	SHA string `json:"sha"`
	URL string `json:"url"`
}

// GitUser is a commit's author or committer as git recorded them.
type GitUser struct {
	Name  string    `json:"name"`
	Email string    `json:"email"`
	Date  wire.Time `json:"date"`
}

// Commit is the platform's commit object (without files and stats).
type Commit struct {
	SHA         string               `json:"sha"`
	NodeID      string               `json:"node_id"`
	Commit      CommitDetail         `json:"commit"`
	URL         string               `json:"url"`
	HTMLURL     string               `json:"html_url"`
	CommentsURL string               `json:"comments_url"`
	Author      *accounts.SimpleUser `json:"author"`
	Committer   *accounts.SimpleUser `json:"committer"`
	Parents     []Parent             `json:"parents"`
}

type CommitDetail struct {
	URL          string       `json:"url"`
	Author       GitUser      `json:"author"`
	Committer    GitUser      `json:"committer"`
	Message      string       `json:"message"`
	Tree         SHAURL       `json:"tree"`
	CommentCount int          `json:"comment_count"`
	Verification Verification `json:"verification"`
}

// Verification says a commit's signature is not verified: forgeapi
// does not verify signatures.
type Verification struct {
	Verified   bool    `json:"verified"`
	Reason     string  `json:"reason"`
	Signature  *string `json:"signature"`
	Payload    *string `json:"payload"`
	VerifiedAt *string `json:"verified_at"`
}

type Parent struct {
	SHA     string `json:"sha"`
	URL     string `json:"url"`
	HTMLURL string `json:"html_url"`
}

// CommitOf renders a commit; its author and committer are the
// accounts whose email addresses git recorded, when there are such.
func CommitOf(ctx context.Context, q store.Q, base string, repo *repos.Repository, c gitread.Commit) (Commit, error) {
	api := base + "/repos/" + repo.FullName()
	web := accounts.WebBase(base) + "/" + repo.FullName()
	author, err := accountOf(ctx, q, base, c.AuthorEmail)
	if err != nil {
		return Commit{}, err
	}
	committer, err := accountOf(ctx, q, base, c.CommitterEmail)
	if err != nil {
		return Commit{}, err
	}
	j := Commit{
		SHA: c.SHA, NodeID: CommitNodeID(repo.ID, c.SHA),
		Commit: CommitDetail{
			URL:          api + "/git/commits/" + c.SHA,
			Author:       GitUser{Name: c.AuthorName, Email: c.AuthorEmail, Date: wire.T(c.AuthorDate)},
			Committer:    GitUser{Name: c.CommitterName, Email: c.CommitterEmail, Date: wire.T(c.CommitterDate)},
			Message:      c.Message,
			Tree:         SHAURL{SHA: c.TreeSHA, URL: api + "/git/trees/" + c.TreeSHA},
			Verification: Verification{Reason: "unsigned"},
		},
		URL: api + "/commits/" + c.SHA, HTMLURL: web + "/commit/" + c.SHA, CommentsURL: api + "/commits/" + c.SHA + "/comments",
		Author: author, Committer: committer, Parents: []Parent{},
	}
	for _, p := range c.ParentSHAs {
		j.Parents = append(j.Parents, Parent{SHA: p, URL: api + "/commits/" + p, HTMLURL: web + "/commit/" + p})
	}
	return j, nil
}

// accountOf is the simple user with the email address, or nil.
func accountOf(ctx context.Context, q store.Q, base, email string) (*accounts.SimpleUser, error) {
	a, err := accounts.ByEmail(ctx, q, email)
	if errors.Is(err, store.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	su := accounts.ToSimpleUser(base, a)
	return &su, nil
}

// CommitNodeID is a commit's global node id: its repository and SHA.
func CommitNodeID(repoID int64, sha string) string {
	return "C_" + base64.RawURLEncoding.EncodeToString([]byte(wire.Itoa(repoID)+":"+sha))
}
