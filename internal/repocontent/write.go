package repocontent

import (
	"context"
	"encoding/base64"
	"errors"
	"net/http"
	"path"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitref"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
)

// MaxWriteSize is the largest file a contents PUT writes (its decoded
// content); the body limit of the route follows it.
const MaxWriteSize = 50 << 20

// identityJSON is an author or committer of a contents write.
type identityJSON struct {
	Name  string `json:"name"`
	Email string `json:"email"`
	Date  string `json:"date"`
}

// writeRequest is the body of PUT and DELETE .../contents/{path}.
type writeRequest struct {
	Message   *string       `json:"message"`
	Content   *string       `json:"content"`
	SHA       string        `json:"sha"`
	Branch    string        `json:"branch" text:"gitname"`
	Committer *identityJSON `json:"committer"`
	Author    *identityJSON `json:"author"`
}

// writeResultJSON is the answer of a contents write: the file (null after
// a deletion) and the commit.
type writeResultJSON struct {
	Content *contentJSON      `json:"content"`
	Commit  gitjson.GitCommit `json:"commit"`
}

// putContents answers PUT /repos/{owner}/{repo}/contents/{path}: one
// commit on the branch (the default one) that creates the file (201) or
// updates it (200; sha must be the file's blob, 409 otherwise), pushed as
// a git push is, with its events.
func (h *Handler) putContents(w http.ResponseWriter, r *http.Request) error {
	return h.writeContents(w, r, false)
}

// deleteContents answers DELETE /repos/{owner}/{repo}/contents/{path}: one
// commit that removes the file (sha must be its blob).
func (h *Handler) deleteContents(w http.ResponseWriter, r *http.Request) error {
	return h.writeContents(w, r, true)
}

func (h *Handler) writeContents(w http.ResponseWriter, r *http.Request, del bool) error {
	var body writeRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	p := strings.Trim(r.PathValue("path"), "/")
	if err := gitwrite.CheckPath(p); err != nil {
		return refused("path", err)
	}
	content, err := body.validate(p, del)
	if err != nil {
		return err
	}
	if !del && gitwrite.IsGitmodules(path.Base(p)) {
		if err := gitwrite.CheckGitmodules(content); err != nil {
			return refused("content", err)
		}
	}
	ctx := r.Context()
	repo := repos.From(ctx)
	pusher, err := accounts.ByID(ctx, h.Repos.DB, auth.PrincipalFrom(ctx).UserID())
	if err != nil {
		return err
	}
	branch := body.Branch
	if branch == "" {
		branch = repo.DefaultBranch
	}
	if !gitref.ValidBranch(branch) { // no branch has such a name, and none may be created
		return branchNotFound(branch)
	}
	g, err := gitread.Open(h.Repos.GitDir(repo.ID))
	if err != nil {
		return err
	}
	defer g.Close()
	parent, existing, err := current(g, branch, p)
	if err != nil {
		return err
	}
	created, err := checkSHA(p, body.SHA, existing, del)
	if err != nil {
		return err
	}
	change, err := h.change(ctx, pusher, body, parent, p, content, del)
	if err != nil {
		return err
	}
	change.Sign = h.Git.WebFlow
	commitSHA, _, err := gitwrite.Commit(ctx, h.Repos.GitDir(repo.ID), change)
	if refusal, ok := errors.AsType[*gitwrite.Refusal](err); ok {
		return apierr.Unprocessable("%s", refusal.Reason)
	} else if err != nil {
		return err
	}
	old := parent
	if old == "" {
		old = strings.Repeat("0", 40)
	}
	// The answer is read before the branch moves: once it moved, nothing
	// may turn the change into an error.
	result, err := h.writeResult(r, g, repo, commitSHA, p, branch, del)
	if err != nil {
		return err
	}
	if err := h.Git.ServerPush(ctx, repo, pusher, []githttp.RefUpdate{{Ref: "refs/heads/" + branch, OldSHA: old, NewSHA: commitSHA}}); err != nil {
		return err
	}
	status := http.StatusOK
	if created {
		status = http.StatusCreated
	}
	httpapi.WriteJSON(w, status, result)
	return nil
}

// validate checks the body of a write and returns the decoded content.
func (b writeRequest) validate(p string, del bool) ([]byte, error) {
	var f apierr.Fields
	if b.Message == nil || strings.TrimSpace(*b.Message) == "" {
		f.Add("Contents", "message", apierr.CodeMissingField)
	}
	var content []byte
	if !del {
		if b.Content == nil {
			f.Add("Contents", "content", apierr.CodeMissingField)
		} else {
			var err error
			if content, err = base64.StdEncoding.DecodeString(strings.ReplaceAll(*b.Content, "\n", "")); err != nil {
				f.Addf("Contents", "content", "content is not valid Base64")
			} else if len(content) > MaxWriteSize {
				f.Addf("Contents", "content", "content is larger than %d bytes", MaxWriteSize)
			}
		}
	} else if b.SHA == "" {
		f.Add("Contents", "sha", apierr.CodeMissingField)
	}
	for _, id := range []*identityJSON{b.Author, b.Committer} {
		if id != nil && (id.Name == "" || id.Email == "") {
			f.Addf("Contents", "committer", "name and email are both required")
		}
	}
	return content, f.Err()
}

// current returns the branch's head ("" when the repository has no
// branch yet) and the entry at p there (zero when nothing is). A branch
// that does not exist in a repository that has branches is a 404.
func current(g *gitread.Repository, branch, p string) (head string, entry gitread.Entry, err error) {
	head, ok, err := g.RefTarget("refs/heads/" + branch)
	if err != nil {
		return "", gitread.Entry{}, err
	}
	if !ok {
		branches, err := g.Branches()
		if err != nil {
			return "", gitread.Entry{}, err
		}
		if len(branches) > 0 {
			return "", gitread.Entry{}, branchNotFound(branch)
		}
		return "", gitread.Entry{}, nil
	}
	entry, _, err = g.Stat(head, p)
	if errors.Is(err, gitread.ErrPathNotFound) {
		return head, gitread.Entry{}, nil
	}
	return head, entry, err
}

// refused is the 422 of a path or a content the server does not let a
// client write (a *gitwrite.Refusal): the reason as the message, as the
// platform answers "path cannot start with a slash".
func refused(field string, err error) error {
	refusal, ok := errors.AsType[*gitwrite.Refusal](err)
	if !ok {
		return err
	}
	return &apierr.Error{Status: http.StatusUnprocessableEntity, Message: refusal.Reason,
		Errors: []apierr.FieldError{{Resource: "Commit", Field: field, Code: apierr.CodeInvalid}}}
}

// branchNotFound is the platform's answer to a write on a branch that
// does not exist.
func branchNotFound(branch string) error {
	return apierr.New(http.StatusNotFound, "Branch %s not found", branch)
}

// checkSHA applies the platform's rule: updating or deleting a file needs
// its blob SHA (422 without, 409 when it is not the file's); deleting
// what is not there is a 404. It reports whether the write creates the
// file.
func checkSHA(p, sha string, existing gitread.Entry, del bool) (bool, error) {
	switch {
	case existing.Type == "":
		if del {
			return false, apierr.NotFound()
		}
		return true, nil
	case existing.Type != gitread.EntryFile && existing.Type != gitread.EntrySymlink:
		return false, apierr.Custom("Contents", "path", "%s is a directory or a submodule, not a file.", p)
	case sha == "":
		return false, apierr.Custom("Contents", "sha", `"sha" wasn't supplied.`)
	case sha != existing.SHA:
		return false, apierr.New(http.StatusConflict, "%s does not match %s", p, sha)
	}
	return false, nil
}

// change is the commit a write makes: by the body's author and committer,
// or by the pusher (name and primary email address; the noreply address
// of the login when there is none).
func (h *Handler) change(ctx context.Context, pusher *accounts.Account, body writeRequest, parent, p string, content []byte, del bool) (gitwrite.Change, error) {
	self, err := h.identityOf(ctx, pusher)
	if err != nil {
		return gitwrite.Change{}, err
	}
	committer := self
	if body.Committer != nil {
		committer = toIdentity(*body.Committer)
	}
	author := committer
	if body.Author != nil {
		author = toIdentity(*body.Author)
	}
	return gitwrite.Change{Parent: parent, Path: p, Content: content, Delete: del, Message: *body.Message,
		Author: author, Committer: committer}, nil
}

// identityOf is an account as a commit's author or committer, now.
func (h *Handler) identityOf(ctx context.Context, a *accounts.Account) (gitwrite.Identity, error) {
	name, email, err := gitjson.AccountIdentity(ctx, h.Repos.DB, a)
	return gitwrite.Identity{Name: name, Email: email, When: time.Now()}, err
}

// toIdentity reads an author or committer of the body; a date that does
// not parse is now.
func toIdentity(j identityJSON) gitwrite.Identity {
	when, err := time.Parse(time.RFC3339, j.Date)
	if err != nil {
		when = time.Now()
	}
	return gitwrite.Identity{Name: j.Name, Email: j.Email, When: when}
}

// writeResult is the answer of a write: the file at the new commit (null
// after a deletion) and the commit.
func (h *Handler) writeResult(r *http.Request, g *gitread.Repository, repo *repos.Repository, commitSHA, p, branch string, del bool) (*writeResultJSON, error) {
	c, err := g.CommitObject(commitSHA)
	if err != nil {
		return nil, err
	}
	base := httpapi.BaseURL(r.Context())
	full, err := gitjson.CommitOf(r.Context(), h.Repos.DB, base, repo, c)
	if err != nil {
		return nil, err
	}
	out := &writeResultJSON{Commit: gitjson.GitCommitOf(full)}
	if !del {
		e, _, err := g.Stat(commitSHA, p)
		if err != nil {
			return nil, err
		}
		j := newPlace(base, repo, branch).toContentJSON(e)
		out.Content = &j
	}
	return out, nil
}
