package graphql

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/pulls"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// executor runs one operation for the request's principal, collecting
// the errors of fields that resolve to null.
type executor struct {
	h         *Handler
	ctx       context.Context
	principal *auth.Principal
	base      string
	vars      variables
	errs      []gqlError
}

// fieldError records a field's error; the field is null in data.
func (ex *executor) fieldError(typ string, path []any, format string, args ...any) {
	ex.errs = append(ex.errs, gqlError{Type: typ, Path: path, Message: fmt.Sprintf(format, args...)})
}

// run resolves the operation's root fields in order (a mutation's one
// after the other, as GraphQL runs them). Its error is a server error,
// not a field's.
func (ex *executor) run(op *operation) (map[string]any, error) {
	data := map[string]any{}
	for _, f := range op.fields {
		var v any
		var err error
		switch f.name {
		case "viewer":
			v, err = ex.viewer(f)
		case "repository":
			v, err = ex.repository(f)
		case "markPullRequestReadyForReview":
			v, err = ex.setDraft(f, false)
		case "convertPullRequestToDraft":
			v, err = ex.setDraft(f, true)
		}
		if err != nil {
			return nil, err
		}
		data[f.key] = v
	}
	return data, nil
}

func (ex *executor) viewer(f field) (any, error) {
	viewer, err := accounts.ByID(ex.ctx, ex.h.DB, ex.principal.UserID())
	if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, s := range f.sel {
		out[s.key] = viewerFields[s.name](ex.base, viewer)
	}
	return out, nil
}

// stringArg is the string argument's value ("" when absent or no string).
func (ex *executor) stringArg(f field, name string) string {
	s, _ := f.args[name].resolve(ex.vars).(string)
	return s
}

// repository answers repository(owner, name) { pullRequest(number) }:
// NOT_FOUND for a repository the caller may not see, as the REST API
// answers 404.
func (ex *executor) repository(f field) (any, error) {
	owner, name := ex.stringArg(f, "owner"), ex.stringArg(f, "name")
	repo, err := repos.ByOwnerAndName(ex.ctx, ex.h.DB, owner, name)
	if err == nil {
		var ok bool
		if ok, err = ex.mayRead(repo); err == nil && !ok {
			err = store.ErrNotFound
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		ex.fieldError("NOT_FOUND", []any{f.key}, "Could not resolve to a Repository with the name '%s/%s'.", owner, name)
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, s := range f.sel { // pullRequest, the one field valid() lets through
		number, _ := s.args["number"].resolve(ex.vars).(float64)
		p, err := ex.h.Pulls.Get(ex.ctx, repo, int64(number))
		if errors.Is(err, store.ErrNotFound) {
			ex.fieldError("NOT_FOUND", []any{f.key, s.key}, "Could not resolve to a PullRequest with the number of %v.", int64(number))
			out[s.key] = nil
			continue
		} else if err != nil {
			return nil, err
		}
		out[s.key] = ex.pull(p, s.sel)
	}
	return out, nil
}

// mayRead reports whether the caller reads the repository's pull
// requests: it sees the repository (access.RepoRole), and a fine-grained
// token reads a private one's pull requests only when it selects it with
// Pull requests read.
func (ex *executor) mayRead(repo *repos.Repository) (bool, error) {
	if access.SAMLRefusal(ex.principal, repo.Owner) != nil {
		return false, nil
	}
	role, err := access.RepoRole(ex.ctx, ex.h.DB, ex.principal, repo)
	if err != nil || role == auth.RoleNone {
		return false, err
	}
	p := ex.principal
	if p.FineGrained() && repo.Private {
		return p.Token.Selects(repo.ID, repo.Owner.ID) && p.Token.Grant.Satisfies(auth.Perm("pull_requests:read")), nil
	}
	return true, nil
}

// draftPermissions are what the draft mutations need of a
// permission-based token, as PATCH .../pulls/{pull_number} does.
var draftPermissions = auth.Perm("pull_requests:write")

// mayWrite reports whether the caller's credentials may change the
// repository's pull requests: classic and OAuth tokens with repo or
// public_repo (a private repository is hidden without repo already),
// fine-grained tokens that select it (the guard's write check,
// access.RepoWriteRefusal) with Pull requests write.
func (ex *executor) mayWrite(repo *repos.Repository) bool {
	p := ex.principal
	switch {
	case p.ScopeBased():
		return p.Token.Scopes.GrantsAny([]string{"repo", "public_repo"})
	case p.FineGrained():
		return access.RepoWriteRefusal(p, repo, draftPermissions) == nil && p.Token.Grant.Satisfies(draftPermissions)
	}
	return true
}

// mutationNames are the mutations' names as the platform's FORBIDDEN
// messages spell them.
var mutationNames = map[bool]string{false: "MarkPullRequestReadyForReview", true: "ConvertPullRequestToDraft"}

// setDraft runs markPullRequestReadyForReview (draft false) or
// convertPullRequestToDraft (draft true) on input.pullRequestId, the pull
// request's node_id: NOT_FOUND when no pull request the caller sees has
// it, FORBIDDEN when the caller is neither its author nor has push access
// or the credentials lack the scope or permission.
func (ex *executor) setDraft(f field, draft bool) (any, error) {
	path := []any{f.key}
	input, _ := f.args["input"].resolve(ex.vars).(map[string]any)
	id, _ := input["pullRequestId"].(string)
	if id == "" {
		ex.fieldError("INVALID", path, "Argument 'input' on Field '%s' has an invalid value: pullRequestId is required.", f.name)
		return nil, nil
	}
	p, err := ex.h.Pulls.ByNodeID(ex.ctx, id)
	if err == nil {
		var ok bool
		if ok, err = ex.mayRead(p.Repo); err == nil && !ok {
			err = store.ErrNotFound
		}
	}
	if errors.Is(err, store.ErrNotFound) {
		ex.fieldError("NOT_FOUND", path, "Could not resolve to a node with the global id of '%s'", id)
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	login := ""
	if ex.principal.Account != nil {
		login = ex.principal.Account.Login
	}
	forbidden := func() (any, error) {
		ex.fieldError("FORBIDDEN", path, "%s does not have the correct permissions to execute `%s`", login, mutationNames[draft])
		return nil, nil
	}
	if !ex.mayWrite(p.Repo) {
		return forbidden()
	}
	role, err := access.RepoRole(ex.ctx, ex.h.DB, ex.principal, p.Repo)
	if err != nil {
		return nil, err
	}
	actor, err := accounts.ByID(ex.ctx, ex.h.DB, ex.principal.UserID())
	if err != nil {
		return nil, err
	}
	p, err = ex.h.Pulls.SetDraft(ex.ctx, p.Repo, actor, p.Number(), draft, role >= auth.RoleWrite)
	if e, ok := errors.AsType[*apierr.Error](err); ok {
		if e.Status == http.StatusForbidden {
			return forbidden()
		}
		ex.fieldError("UNPROCESSABLE", path, "%s", e.Message)
		return nil, nil
	} else if err != nil {
		return nil, err
	}
	out := map[string]any{}
	for _, s := range f.sel {
		switch s.name {
		case "pullRequest":
			out[s.key] = ex.pull(p, s.sel)
		case "clientMutationId":
			out[s.key] = input["clientMutationId"]
		}
	}
	return out, nil
}

// pullFields are the PullRequest fields forgeapi answers.
var pullFields = map[string]func(base string, p *pulls.PullRequest) any{
	"id":          func(_ string, p *pulls.PullRequest) any { return wire.NodeID("PR", p.ID) },
	"databaseId":  func(_ string, p *pulls.PullRequest) any { return p.ID },
	"number":      func(_ string, p *pulls.PullRequest) any { return p.Number() },
	"title":       func(_ string, p *pulls.PullRequest) any { return p.Issue.Title },
	"body":        func(_ string, p *pulls.PullRequest) any { return p.Issue.Body },
	"isDraft":     func(_ string, p *pulls.PullRequest) any { return p.Draft },
	"state":       pullState,
	"closed":      func(_ string, p *pulls.PullRequest) any { return !p.Open() },
	"merged":      func(_ string, p *pulls.PullRequest) any { return p.MergedAt != nil },
	"headRefName": func(_ string, p *pulls.PullRequest) any { return p.HeadRef },
	"baseRefName": func(_ string, p *pulls.PullRequest) any { return p.BaseRef },
	"url": func(base string, p *pulls.PullRequest) any {
		return httpapi.WebBase(base) + "/" + p.Repo.FullName() + "/pull/" + wire.Itoa(p.Number())
	},
}

// pullState is the PullRequestState enum: OPEN, CLOSED or MERGED.
func pullState(_ string, p *pulls.PullRequest) any {
	switch {
	case p.MergedAt != nil:
		return "MERGED"
	case p.Issue.State == issues.StateOpen:
		return "OPEN"
	}
	return strings.ToUpper(issues.StateClosed)
}

// pull renders the selected fields of a pull request.
func (ex *executor) pull(p *pulls.PullRequest, sel []field) map[string]any {
	out := map[string]any{}
	for _, s := range sel {
		out[s.key] = pullFields[s.name](ex.base, p)
	}
	return out
}
