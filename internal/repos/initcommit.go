package repos

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/git/gitcmd"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/store"
)

// File is one file of a commit the server makes for a new repository: a
// path at the root of its tree and the content.
type File struct {
	Path    string
	Content []byte
}

// initialMessage is the message of the commits the platform makes for a
// new repository (auto_init, and a repository generated from a template).
const initialMessage = "Initial commit"

// commitIdentity is the author and committer of the commits the server
// makes for the actor: the name (the login when there is none) and the
// primary email address (the login's noreply address when there is none),
// as the contents API signs its commits.
func commitIdentity(ctx context.Context, q store.Q, actor *accounts.Account) ([]string, error) {
	name := actor.Name
	if name == "" {
		name = actor.Login
	}
	email := actor.Login + "@users.noreply.forgeapi.local"
	emails, err := accounts.Emails(ctx, q, actor.ID, false)
	if err != nil {
		return nil, err
	}
	if len(emails) > 0 {
		email = emails[0].Address
	}
	return []string{"GIT_AUTHOR_NAME=" + name, "GIT_AUTHOR_EMAIL=" + email,
		"GIT_COMMITTER_NAME=" + name, "GIT_COMMITTER_EMAIL=" + email}, nil
}

// writeRootCommit writes the files as the tree of a commit without
// parents in the bare repository dir, as `git hash-object -w`, `git
// mktree` and `git commit-tree` write them, and returns the commit's SHA.
// No reference moves.
func writeRootCommit(ctx context.Context, git gitcmd.Git, files []File) (string, error) {
	var tree strings.Builder
	for _, f := range files {
		blob, err := git.Output(ctx, strings.NewReader(string(f.Content)), "hash-object", "-w", "--stdin")
		if err != nil {
			return "", fmt.Errorf("write %s: %w", f.Path, err)
		}
		fmt.Fprintf(&tree, "100644 blob %s\t%s\n", strings.TrimSpace(string(blob)), f.Path)
	}
	treeSHA, err := git.Output(ctx, strings.NewReader(tree.String()), "mktree")
	if err != nil {
		return "", fmt.Errorf("write the tree: %w", err)
	}
	return commitTree(ctx, git, strings.TrimSpace(string(treeSHA)))
}

// commitTree writes a commit of the tree without parents, with the
// initial message, and returns its SHA.
func commitTree(ctx context.Context, git gitcmd.Git, tree string) (string, error) {
	sha, err := git.Output(ctx, nil, "commit-tree", tree, "-m", initialMessage)
	if err != nil {
		return "", fmt.Errorf("write the commit: %w", err)
	}
	return strings.TrimSpace(string(sha)), nil
}

// initialize is the fill of a new repository with files: the root
// commit of the files on its default branch, made before the creating
// transaction as a fork's copy is.
func (s *Service) initialize(ctx context.Context, n NewRepository, actor *accounts.Account) func(staging string) error {
	return func(staging string) error {
		ident, err := commitIdentity(ctx, s.DB, actor)
		if err != nil {
			return err
		}
		git := gitcmd.In(staging).With(ident...)
		sha, err := writeRootCommit(ctx, git, n.Files)
		if err != nil {
			return err
		}
		return git.Run(ctx, "update-ref", "refs/heads/"+n.DefaultBranch, sha)
	}
}

// generatedRef is where a generated repository's commits wait, in its
// staging repository, for the push that puts them on their branches.
const generatedRef = "refs/forgeapi-generate/"

// Generate creates the repository n from the template tmpl: for the
// template's default branch (every branch with allBranches) a commit
// without parents of the branch's tree, by the actor, with the
// platform's message "Initial commit"; the repository's default branch
// is the template's. The commits' objects are copied before the
// creating transaction (not the template's history); once the
// repository exists the branches are pushed by ServerPush, so that the
// platform's push (and create) events are sent. A push that fails leaves
// the repository without branches and is the error.
func (s *Service) Generate(ctx context.Context, tmpl *Repository, n NewRepository, allBranches bool, actor *accounts.Account) (*Repository, error) {
	n.TemplateID, n.DefaultBranch = tmpl.ID, tmpl.DefaultBranch
	var updates []githttp.RefUpdate
	fill := func(staging string) error {
		var err error
		updates, err = s.copyTemplate(ctx, staging, s.GitDir(tmpl.ID), tmpl.DefaultBranch, allBranches, actor)
		return err
	}
	repo, err := s.create(ctx, n, actor, fill, nil)
	if err != nil || len(updates) == 0 || s.ServerPush == nil {
		return repo, err
	}
	if err := s.ServerPush(ctx, repo, actor, updates); err != nil {
		return nil, err
	}
	return ByID(ctx, s.DB, repo.ID)
}

// copyTemplate writes into staging a commit of the tree of each branch
// of the template (in the bare repository src) to copy, and returns the
// updates that put them on their branches. The template's objects are
// reached through git's alternates while the commits are written, then
// `git repack -a -d` copies those the commits reach and the alternates
// go: the new repository holds its own objects, none of the template's
// history.
func (s *Service) copyTemplate(ctx context.Context, staging, src, defaultBranch string, allBranches bool, actor *accounts.Account) ([]githttp.RefUpdate, error) {
	branches := []string{defaultBranch}
	if allBranches {
		out, err := gitcmd.In(src).Output(ctx, nil, "for-each-ref", "--format=%(refname:lstrip=2)", "refs/heads/")
		if err != nil {
			return nil, err
		}
		branches = strings.Fields(string(out))
	}
	alternates := filepath.Join(staging, "objects", "info", "alternates")
	if err := os.WriteFile(alternates, []byte(filepath.Join(src, "objects")+"\n"), 0o644); err != nil {
		return nil, err
	}
	ident, err := commitIdentity(ctx, s.DB, actor)
	if err != nil {
		return nil, err
	}
	git := gitcmd.In(staging).With(ident...)
	var updates []githttp.RefUpdate
	for _, b := range branches {
		tree, err := gitcmd.In(src).Output(ctx, nil, "rev-parse", "--verify", "--quiet", "refs/heads/"+b+"^{tree}")
		if err != nil {
			continue // an empty template, or a branch gone meanwhile
		}
		sha, err := commitTree(ctx, git, strings.TrimSpace(string(tree)))
		if err != nil {
			return nil, err
		}
		if err := git.Run(ctx, "update-ref", generatedRef+b, sha); err != nil {
			return nil, err
		}
		updates = append(updates, githttp.RefUpdate{Ref: "refs/heads/" + b, OldSHA: zeroSHA, NewSHA: sha})
	}
	if err := git.Run(ctx, "repack", "-a", "-d", "-q"); err != nil {
		return nil, err
	}
	if err := os.Remove(alternates); err != nil {
		return nil, err
	}
	for _, u := range updates {
		if err := git.Run(ctx, "update-ref", "-d", generatedRef+strings.TrimPrefix(u.Ref, "refs/heads/")); err != nil {
			return nil, err
		}
	}
	return updates, nil
}

// zeroSHA is git's name of no object: the old value of a created
// reference.
const zeroSHA = "0000000000000000000000000000000000000000"

// TemplateFiles are the files of an initial commit that the creation's
// auto_init, gitignore_template and license_template ask for (nil when
// none): README.md with "# name" and the description, the platform's
// .gitignore template, and the license's text with [year] and
// [fullname] filled with the year of now and the owner's name (its login
// when it has none).
func TemplateFiles(n NewRepository, autoInit bool, gitignore, license string, now time.Time) []File {
	var files []File
	if autoInit {
		readme := "# " + n.Name + "\n"
		if n.Description != "" {
			readme += n.Description + "\n"
		}
		files = append(files, File{Path: "README.md", Content: []byte(readme)})
	}
	if gitignore != "" {
		files = append(files, File{Path: ".gitignore", Content: []byte(gitignore)})
	}
	if license != "" {
		fullname := n.Owner.Name
		if fullname == "" {
			fullname = n.Owner.Login
		}
		text := strings.NewReplacer("[year]", fmt.Sprint(now.Year()), "[fullname]", fullname).Replace(license)
		files = append(files, File{Path: "LICENSE", Content: []byte(text)})
	}
	return files
}
