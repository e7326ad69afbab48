package gitdata

import (
	"context"
	"net/http"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/git/gitread"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/repos/gitjson"
)

// identityJSON is an author, a committer or a tagger of a write.
type identityJSON struct {
	Name  *string `json:"name"`
	Email *string `json:"email"`
	Date  *string `json:"date"`
}

// commitRequest is the body of POST .../git/commits.
type commitRequest struct {
	Message   *string       `json:"message"`
	Tree      *string       `json:"tree"`
	Parents   []string      `json:"parents"`
	Author    *identityJSON `json:"author"`
	Committer *identityJSON `json:"committer"`
	Signature string        `json:"signature"`
}

// createCommit answers POST /repos/{owner}/{repo}/git/commits: 201 with
// the new commit. The tree must be a tree and each parent a commit of
// the repository (422 otherwise). The author is the body's (its date now
// when it names none) or the caller (name and primary email address);
// the committer the body's, or the author. A signature is kept as the
// commit's gpgsig header, verified as any commit's (sigverify).
func (h *Handler) createCommit(w http.ResponseWriter, r *http.Request) error {
	var body commitRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	var f apierr.Fields
	if body.Message == nil {
		f.Add("Commit", "message", apierr.CodeMissingField)
	}
	if body.Tree == nil {
		f.Add("Commit", "tree", apierr.CodeMissingField)
	}
	if err := f.Err(); err != nil {
		return err
	}
	ctx := r.Context()
	repo := repos.From(ctx)
	dir := h.Repos.GitDir(repo.ID)
	g, err := gitread.Open(dir)
	if err != nil {
		return err
	}
	defer g.Close()
	if ok, err := objectIs(g, *body.Tree, "tree"); err != nil {
		return err
	} else if !ok {
		return apierr.Unprocessable("Tree SHA does not exist")
	}
	for _, p := range body.Parents {
		if ok, err := objectIs(g, p, "commit"); err != nil {
			return err
		} else if !ok {
			return apierr.Unprocessable("Parent SHA does not exist or is not a commit object")
		}
	}
	author, err := h.identity(ctx, body.Author, "author", nil)
	if err != nil {
		return err
	}
	committer, err := h.identity(ctx, body.Committer, "committer", &author)
	if err != nil {
		return err
	}
	sha, err := gitwrite.WriteCommit(ctx, dir, gitwrite.NewCommit{Tree: *body.Tree, Parents: body.Parents,
		Author: author, Committer: committer, Message: *body.Message, Signature: body.Signature, Sign: h.WebFlow})
	if err != nil {
		return refused("", err)
	}
	c, err := g.CommitObject(sha)
	if err != nil {
		return err
	}
	full, err := gitjson.CommitOf(ctx, h.Repos.DB, httpapi.BaseURL(ctx), repo, c)
	if err != nil {
		return err
	}
	httpapi.WriteCreated(w, full.Commit.URL, gitjson.GitCommitOf(full))
	return nil
}

// identity is the author, committer or tagger (field) of a write: the
// body's j, its date now when it gives none; without j, fallback when
// there is one, else the caller now. A name or an email that is missing
// or empty, or a date that is not ISO 8601, is a 422.
func (h *Handler) identity(ctx context.Context, j *identityJSON, field string, fallback *gitwrite.Identity) (gitwrite.Identity, error) {
	if j == nil {
		if fallback != nil {
			return *fallback, nil
		}
		caller, err := accounts.ByID(ctx, h.Repos.DB, auth.PrincipalFrom(ctx).UserID())
		if err != nil {
			return gitwrite.Identity{}, err
		}
		name, email, err := gitjson.AccountIdentity(ctx, h.Repos.DB, caller)
		return gitwrite.Identity{Name: name, Email: email, When: time.Now()}, err
	}
	var f apierr.Fields
	if j.Name == nil || *j.Name == "" {
		f.Add("Commit", field+".name", apierr.CodeMissingField)
	}
	if j.Email == nil || *j.Email == "" {
		f.Add("Commit", field+".email", apierr.CodeMissingField)
	}
	if err := f.Err(); err != nil {
		return gitwrite.Identity{}, err
	}
	id := gitwrite.Identity{Name: *j.Name, Email: *j.Email, When: time.Now()}
	if j.Date != nil && *j.Date != "" {
		when, err := time.Parse(time.RFC3339, *j.Date)
		if err != nil {
			return id, apierr.Custom("Commit", field+".date", "%s.date is not a valid ISO 8601 date: %s", field, *j.Date)
		}
		id.When = when
	}
	return id, nil
}
