// Package gitjson renders git objects as the platform's JSON: commits
// with their authors matched to accounts by email. Areas that show
// commits (contents and branches, commit statuses, webhooks) share it.
package gitjson

import (
	"context"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/repos"
	"forgeapi/internal/sigverify"
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

// Verification is a commit's or a tag's signature and whether it is
// verified, with the platform's reason.
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
	verification, err := verify(ctx, q, c)
	if err != nil {
		return Commit{}, err
	}
	comments, err := commentCount(ctx, q, repo.ID, c.SHA)
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
			CommentCount: comments,
			Verification: verification,
		},
		URL: api + "/commits/" + c.SHA, HTMLURL: web + "/commit/" + c.SHA, CommentsURL: api + "/commits/" + c.SHA + "/comments",
		Author: author, Committer: committer, Parents: []Parent{},
	}
	for _, p := range c.ParentSHAs {
		j.Parents = append(j.Parents, Parent{SHA: p, URL: api + "/commits/" + p, HTMLURL: web + "/commit/" + p})
	}
	return j, nil
}

// commentCount is the number of commit comments on the commit in the
// repository (the commit JSON's comment_count).
func commentCount(ctx context.Context, q store.Q, repoID int64, sha string) (int, error) {
	var n int
	err := q.QueryRowContext(ctx,
		`SELECT COUNT(*) FROM commit_comments WHERE repository_id = $1 AND commit_id = $2`, repoID, sha).Scan(&n)
	return n, err
}

// VerificationOf is the verification of an object with the signature
// and the payload it signs: "unsigned" without a signature; with one,
// not verified for "unknown_key" (no key is known to check it against),
// the signature and the payload shown.
func VerificationOf(signature, payload string) Verification {
	if signature == "" {
		return Verification{Reason: "unsigned"}
	}
	return Verification{Reason: "unknown_key", Signature: &signature, Payload: &payload}
}

// verify is the verification of a commit: its signature checked against
// the keys of its committer's account (sigverify).
func verify(ctx context.Context, q store.Q, c gitread.Commit) (Verification, error) {
	return Verify(ctx, q, c.Signature, c.Payload, c.CommitterEmail)
}

// Verify is the verification of an object (a commit, an annotated tag)
// with the signature over payload, made by the committer or tagger of
// email: VerificationOf with the verdict and reason of sigverify.
func Verify(ctx context.Context, q store.Q, signature, payload, email string) (Verification, error) {
	v := VerificationOf(signature, payload)
	if signature == "" {
		return v, nil
	}
	res, err := sigverify.Verify(ctx, q, signature, payload, email)
	v.Verified, v.Reason = res.Verified, res.Reason
	return v, err
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
func CommitNodeID(repoID int64, sha string) string { return objectNodeID("C_", repoID, sha) }

// RefNodeID is a reference's global node id: its repository and full
// name ("refs/heads/main").
func RefNodeID(repoID int64, name string) string { return objectNodeID("REF_", repoID, name) }

// BlobNodeID is a blob's global node id: its repository and SHA.
func BlobNodeID(repoID int64, sha string) string { return objectNodeID("B_", repoID, sha) }

// TreeNodeID is a tree's global node id: its repository and SHA (REST
// shows none; GraphQL's Tree.id is this).
func TreeNodeID(repoID int64, sha string) string { return objectNodeID("TREE_", repoID, sha) }

// ParseObjectNodeID reads a node id of CommitNodeID, RefNodeID,
// BlobNodeID, TreeNodeID or TagNodeID back: its prefix ("C_", "REF_",
// "B_", "TREE_", "TAGOBJ_"), repository id and key (SHA or full name).
func ParseObjectNodeID(id string) (prefix string, repoID int64, key string, ok bool) {
	for _, p := range []string{"C_", "REF_", "B_", "TREE_", "TAGOBJ_"} {
		rest, found := strings.CutPrefix(id, p)
		if !found {
			continue
		}
		raw, err := base64.RawURLEncoding.DecodeString(rest)
		if err != nil {
			return "", 0, "", false
		}
		idPart, key, found := strings.Cut(string(raw), ":")
		repoID, err := strconv.ParseInt(idPart, 10, 64)
		return p, repoID, key, found && err == nil && key != ""
	}
	return "", 0, "", false
}

// objectNodeID is the node id of prefix for a git object or reference
// of the repository: the repository's id and the key, base64url.
func objectNodeID(prefix string, repoID int64, key string) string {
	return prefix + base64.RawURLEncoding.EncodeToString([]byte(wire.Itoa(repoID)+":"+key))
}

// TagNodeID is an annotated tag object's global node id: its repository
// and SHA.
func TagNodeID(repoID int64, sha string) string { return objectNodeID("TAGOBJ_", repoID, sha) }
