package gitjson

import (
	"context"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/store"
)

// GitCommit is the platform's git-commit: a commit as the git database
// API shows it.
type GitCommit struct {
	SHA          string       `json:"sha"`
	NodeID       string       `json:"node_id"`
	URL          string       `json:"url"`
	HTMLURL      string       `json:"html_url"`
	Author       GitUser      `json:"author"`
	Committer    GitUser      `json:"committer"`
	Tree         SHAURL       `json:"tree"`
	Message      string       `json:"message"`
	Parents      []Parent     `json:"parents"`
	Verification Verification `json:"verification"`
}

// GitCommitOf is the git-commit of a commit rendered by CommitOf.
func GitCommitOf(full Commit) GitCommit {
	return GitCommit{SHA: full.SHA, NodeID: full.NodeID, URL: full.Commit.URL,
		HTMLURL: full.HTMLURL, Author: full.Commit.Author, Committer: full.Commit.Committer,
		Tree: full.Commit.Tree, Message: full.Commit.Message, Parents: full.Parents, Verification: full.Commit.Verification}
}

// Tree is the platform's git-tree.
type Tree struct {
	SHA       string      `json:"sha"`
	URL       string      `json:"url"`
	Tree      []TreeEntry `json:"tree"`
	Truncated bool        `json:"truncated"`
}

// TreeEntry is an entry of a git-tree: blobs carry their size and URL,
// trees their URL, submodules (commits) neither.
type TreeEntry struct {
	Path string `json:"path"`
	Mode string `json:"mode"`
	Type string `json:"type"`
	SHA  string `json:"sha"`
	Size *int64 `json:"size,omitempty"`
	URL  string `json:"url,omitempty"`
}

// TreeOf renders the tree sha with its entries; api is the repository's
// API URL.
func TreeOf(api, sha string, entries []gitread.TreeEntry, truncated bool) Tree {
	out := Tree{SHA: sha, URL: api + "/git/trees/" + sha, Tree: make([]TreeEntry, 0, len(entries)), Truncated: truncated}
	for _, e := range entries {
		j := TreeEntry{Path: e.Path, Mode: e.Mode, Type: e.Type, SHA: e.SHA}
		switch e.Type {
		case "blob":
			size := e.Size
			j.Size, j.URL = &size, api+"/git/blobs/"+e.SHA
		case "tree":
			j.URL = api + "/git/trees/" + e.SHA
		}
		out.Tree = append(out.Tree, j)
	}
	return out
}

// AccountIdentity is the name and email address of a commit the account
// makes without naming its author: its name (its login when it has
// none) and its primary email address (its login's noreply address when
// it has none).
func AccountIdentity(ctx context.Context, q store.Q, a *accounts.Account) (name, email string, err error) {
	name, email = a.Name, a.Login+"@users.noreply.forgeapi.local"
	if name == "" {
		name = a.Login
	}
	emails, err := accounts.Emails(ctx, q, a.ID, false)
	if err != nil {
		return "", "", err
	}
	if len(emails) > 0 {
		email = emails[0].Address
	}
	return name, email, nil
}
