package graphql

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	gql "github.com/graph-gophers/graphql-go"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// The permissions the issue mutations need of a permission-based token,
// as the REST routes they stand for: Issues write, or for labels Issues
// or Pull requests write.
var (
	issuesWrite = auth.Perm("issues:write")
	labelsWrite = auth.Perm("issues:write", "pull_requests:write")
)

// mayWrite reports whether the caller's credentials may change what
// perms names in the repository (its issues, pull requests, contents):
// classic and OAuth tokens with repo or public_repo (a private repository
// is hidden without repo already), fine-grained and installation tokens
// that select it (the guard's write check, access.RepoWriteRefusal) with
// perms.
func mayWrite(p *auth.Principal, repo *repos.Repository, perms auth.Alternatives) bool {
	switch {
	case p.ScopeBased():
		return p.Token.Scopes.GrantsAny([]string{"repo", "public_repo"})
	case p.FineGrained():
		return access.RepoWriteRefusal(p, repo, perms) == nil && p.Token.Grant.Satisfies(perms)
	}
	return true
}

// unresolved is the NOT_FOUND error of a node id that names nothing the
// caller may see.
func unresolved(id gql.ID) error {
	return notFound(fmt.Sprintf("Could not resolve to a node with the global id of '%s'", id))
}

// issueTarget is the issue or pull request a mutation names, with its
// repository as the caller sees it.
type issueTarget struct {
	is   *issues.Issue
	repo *repositoryResolver
	pull *pullRequestResolver // set for a pull request
}

// number is the target's issue number.
func (t *issueTarget) number() int64 { return t.is.Number }

// target resolves the id of an issue (I_) or, when pullsToo, a pull
// request (PR_) the caller reads; NOT_FOUND otherwise.
func (h *Handler) target(ctx context.Context, id gql.ID, pullsToo bool) (*issueTarget, error) {
	typ, dbID, ok := wire.ParseNodeID(string(id))
	switch {
	case ok && typ == "PR" && pullsToo:
		pr, err := h.pullByNodeID(ctx, string(id))
		if errors.Is(err, store.ErrNotFound) {
			return nil, unresolved(id)
		} else if err != nil {
			return nil, err
		}
		return &issueTarget{is: pr.p.Issue, repo: pr.repo, pull: pr}, nil
	case ok && typ == "I":
		is, repo, err := h.Issues.IssueByID(ctx, dbID)
		var r *repositoryResolver
		if err == nil {
			r, err = h.visibleRepository(ctx, repo)
		}
		if errors.Is(err, store.ErrNotFound) || err == nil && (is.PullRequest || !mayReadIssues(requestFrom(ctx).principal, repo)) {
			return nil, unresolved(id)
		} else if err != nil {
			return nil, err
		}
		return &issueTarget{is: is, repo: r}, nil
	}
	return nil, unresolved(id)
}

// reload reads the target again after a change.
func (h *Handler) reload(ctx context.Context, t *issueTarget) (*issueTarget, error) {
	if t.pull != nil {
		p, err := h.Pulls.Get(ctx, t.repo.r, t.number())
		if err != nil {
			return nil, err
		}
		return &issueTarget{is: p.Issue, repo: t.repo, pull: &pullRequestResolver{h: h, p: p, repo: t.repo}}, nil
	}
	is, err := h.Issues.Get(ctx, t.repo.r, t.number())
	return &issueTarget{is: is, repo: t.repo}, err
}

// resolver is the target's Issue or PullRequest.
func (t *issueTarget) resolver(h *Handler) node {
	if t.pull != nil {
		return t.pull
	}
	return &issueResolver{h: h, is: t.is, repo: t.repo}
}

// writer is the caller's account and whether they may triage the
// repository's issues; FORBIDDEN, naming the mutation as the platform's
// message does, when the credentials may not make the change.
func (h *Handler) writer(ctx context.Context, repo *repositoryResolver, perms auth.Alternatives, mutation string) (*accounts.Account, bool, error) {
	p := requestFrom(ctx).principal
	if !mayWrite(p, repo.r, perms) {
		return nil, false, refusal(p, mutation)
	}
	if repo.r.Archived {
		return nil, false, errArchived
	}
	actor, err := accounts.ByID(ctx, h.DB, p.UserID())
	if err != nil {
		return nil, false, err
	}
	triage, err := issues.CanTriage(ctx, h.DB, p, repo.role, repo.r)
	return actor, triage, err
}

// errArchived is the FORBIDDEN error of a change to an archived
// repository, REST's 403.
var errArchived = forbidden("Repository was archived so is read-only.")

// refusal is the FORBIDDEN error of a mutation the caller may not run.
func refusal(p *auth.Principal, mutation string) error {
	login := ""
	if p.Account != nil {
		login = p.Account.Login
	}
	return forbidden(fmt.Sprintf("%s does not have the correct permissions to execute `%s`", login, mutation))
}

// serviceError is the field error of a service's refusal: FORBIDDEN for
// a 403, NOT_FOUND for a 404, UNPROCESSABLE with the failed fields for a
// 422; other errors are server errors.
func serviceError(err error) error {
	if errors.Is(err, store.ErrNotFound) {
		return notFound("Could not resolve to a node.")
	}
	e, ok := errors.AsType[*apierr.Error](err)
	if !ok {
		return err
	}
	switch e.Status {
	case http.StatusForbidden:
		return forbidden(e.Message)
	case http.StatusNotFound:
		return notFound(e.Message)
	}
	msg := e.Message
	for _, f := range e.Errors {
		if f.Message != "" { // a custom error's own words, as the platform's
			msg = f.Message
			break
		}
		msg += fmt.Sprintf("; %s %s is %s", f.Resource, f.Field, f.Code)
	}
	return &fieldError{typ: "UNPROCESSABLE", msg: msg}
}

// unprocessable is an UNPROCESSABLE field error.
func unprocessable(msg string) error { return &fieldError{typ: "UNPROCESSABLE", msg: msg} }

// checkText refuses a blank required text (title, comment) or one over
// max characters, as REST's validation.
func checkText(name, s string, max int, required bool) error {
	switch {
	case required && strings.TrimSpace(s) == "":
		return unprocessable(fmt.Sprintf("%s can't be blank", name))
	case apierr.TooLongFor(s, max):
		return unprocessable(fmt.Sprintf("%s is too long (maximum is %d characters)", name, max))
	}
	return nil
}

// labelNames are the names of the repository's labels of ids.
func (h *Handler) labelNames(ctx context.Context, repo *repos.Repository, ids []gql.ID) ([]string, error) {
	names := make([]string, 0, len(ids))
	for _, id := range ids {
		typ, dbID, ok := wire.ParseNodeID(string(id))
		if !ok || typ != "LA" {
			return nil, unresolved(id)
		}
		lb, lrepo, err := h.Issues.LabelByID(ctx, dbID)
		if errors.Is(err, store.ErrNotFound) || err == nil && lrepo.ID != repo.ID {
			return nil, unresolved(id)
		} else if err != nil {
			return nil, err
		}
		names = append(names, lb.Name)
	}
	return names, nil
}

// logins are the logins of the users of ids.
func (h *Handler) logins(ctx context.Context, ids []gql.ID) ([]string, error) {
	out := make([]string, 0, len(ids))
	for _, id := range ids {
		typ, dbID, ok := wire.ParseNodeID(string(id))
		if !ok || typ != "U" && typ != "BOT" {
			return nil, unresolved(id)
		}
		a, err := accounts.ByID(ctx, h.DB, dbID)
		if errors.Is(err, store.ErrNotFound) {
			return nil, unresolved(id)
		} else if err != nil {
			return nil, err
		}
		out = append(out, a.Login)
	}
	return out, nil
}

// milestoneNumber is the number of the repository's milestone of id.
func (h *Handler) milestoneNumber(ctx context.Context, repo *repos.Repository, id gql.ID) (int64, error) {
	typ, dbID, ok := wire.ParseNodeID(string(id))
	if !ok || typ != "MI" {
		return 0, unresolved(id)
	}
	m, mrepo, err := h.Issues.MilestoneByID(ctx, dbID)
	if errors.Is(err, store.ErrNotFound) || err == nil && mrepo.ID != repo.ID {
		return 0, unresolved(id)
	}
	return m.Number, err
}

// issuePayload resolves the payloads of the mutations that answer an
// issue.
type issuePayload struct {
	issue            *issueResolver
	clientMutationID *string
}

func (p *issuePayload) Issue() *issueResolver     { return p.issue }
func (p *issuePayload) ClientMutationID() *string { return p.clientMutationID }

// createIssueInput is the CreateIssueInput input.
type createIssueInput struct {
	RepositoryID               gql.ID
	Title                      string
	Body                       *string
	AssigneeIDs, LabelIDs      *[]gql.ID
	ProjectIDs                 *[]gql.ID
	MilestoneID, ParentIssueID *gql.ID
	IssueTemplate              *string
	ClientMutationID           *string
}

// CreateIssue opens an issue through issues.Service.Create, as POST
// /repos/{owner}/{repo}/issues: its events and webhooks, its
// labels, assignees and milestone for a triager only (ignored for
// others, as REST ignores them).
func (q *root) CreateIssue(ctx context.Context, args struct{ Input createIssueInput }) (*issuePayload, error) {
	in := args.Input
	h := q.handler(ctx)
	typ, dbID, ok := wire.ParseNodeID(string(in.RepositoryID))
	if !ok || typ != "R" {
		return nil, unresolved(in.RepositoryID)
	}
	repo, err := repos.ByID(ctx, h.DB, dbID)
	var r *repositoryResolver
	if err == nil {
		r, err = h.visibleRepository(ctx, repo)
	}
	if errors.Is(err, store.ErrNotFound) {
		return nil, unresolved(in.RepositoryID)
	} else if err != nil {
		return nil, err
	}
	switch {
	case in.ProjectIDs != nil && len(*in.ProjectIDs) > 0:
		return nil, unprocessable("forgeapi has no projects: projectIds must be empty.")
	case in.ParentIssueID != nil || in.IssueTemplate != nil:
		return nil, unprocessable("forgeapi has no sub-issues or issue templates: parentIssueId and issueTemplate are not supported.")
	}
	n := issues.NewIssue{Title: in.Title}
	if in.Body != nil {
		n.Body = *in.Body
	}
	if err := cmpErr(checkText("Title", n.Title, issues.MaxTitle, true), checkText("Body", n.Body, issues.MaxBody, false)); err != nil {
		return nil, err
	}
	actor, triage, err := h.writer(ctx, r, issuesWrite, "CreateIssue")
	if err != nil {
		return nil, err
	}
	if in.LabelIDs != nil {
		if n.Labels, err = h.labelNames(ctx, repo, *in.LabelIDs); err != nil {
			return nil, err
		}
	}
	if in.AssigneeIDs != nil {
		if n.Assignees, err = h.logins(ctx, *in.AssigneeIDs); err != nil {
			return nil, err
		}
	}
	if in.MilestoneID != nil {
		m, err := h.milestoneNumber(ctx, repo, *in.MilestoneID)
		if err != nil {
			return nil, err
		}
		n.Milestone = &m
	}
	is, err := h.Issues.Create(ctx, repo, actor, n, triage)
	if err != nil {
		return nil, serviceError(err)
	}
	return &issuePayload{issue: &issueResolver{h: h, is: is, repo: r}, clientMutationID: in.ClientMutationID}, nil
}

// cmpErr is the first error that is not nil.
func cmpErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// updateIssueInput is the UpdateIssueInput input.
type updateIssueInput struct {
	ID                    gql.ID
	Title, Body           *string
	State                 *string
	AssigneeIDs, LabelIDs *[]gql.ID
	ProjectIDs            *[]gql.ID
	MilestoneID           gql.NullID
	ClientMutationID      *string
}

// UpdateIssue changes an issue through issues.Service.Update, as PATCH
// .../issues/{issue_number}: its author changes its title, body and
// state, a triager anything; labels, assignees and milestone (null
// removes it) are ignored for others, as REST ignores them.
func (q *root) UpdateIssue(ctx context.Context, args struct{ Input updateIssueInput }) (*issuePayload, error) {
	in := args.Input
	h := q.handler(ctx)
	t, err := h.target(ctx, in.ID, false)
	if err != nil {
		return nil, err
	}
	if in.ProjectIDs != nil && len(*in.ProjectIDs) > 0 {
		return nil, unprocessable("forgeapi has no projects: projectIds must be empty.")
	}
	c := issues.Changes{Title: in.Title, Body: in.Body}
	if in.Title != nil {
		if err := checkText("Title", *in.Title, issues.MaxTitle, true); err != nil {
			return nil, err
		}
	}
	if in.Body != nil {
		if err := checkText("Body", *in.Body, issues.MaxBody, false); err != nil {
			return nil, err
		}
	}
	if in.State != nil {
		state := strings.ToLower(*in.State)
		c.State = &state
	}
	if in.LabelIDs != nil {
		names, err := h.labelNames(ctx, t.repo.r, *in.LabelIDs)
		if err != nil {
			return nil, err
		}
		c.Labels = &names
	}
	if in.AssigneeIDs != nil {
		logins, err := h.logins(ctx, *in.AssigneeIDs)
		if err != nil {
			return nil, err
		}
		c.Assignees = &logins
	}
	if in.MilestoneID.Set {
		if in.MilestoneID.Value == nil {
			c.ClearMilestone = true
		} else {
			m, err := h.milestoneNumber(ctx, t.repo.r, *in.MilestoneID.Value)
			if err != nil {
				return nil, err
			}
			c.Milestone = &m
		}
	}
	return h.update(ctx, t, c, "UpdateIssue", in.ClientMutationID)
}

// update applies the changes to the target issue as its caller.
func (h *Handler) update(ctx context.Context, t *issueTarget, c issues.Changes, mutation string, clientMutationID *string) (*issuePayload, error) {
	actor, triage, err := h.writer(ctx, t.repo, issuesWrite, mutation)
	if err != nil {
		return nil, err
	}
	is, err := h.Issues.Update(ctx, t.repo.r, actor, t.number(), c, triage)
	if e, ok := errors.AsType[*apierr.Error](err); ok && e.Status == http.StatusForbidden {
		return nil, refusal(requestFrom(ctx).principal, mutation)
	} else if err != nil {
		return nil, serviceError(err)
	}
	return &issuePayload{issue: &issueResolver{h: h, is: is, repo: t.repo}, clientMutationID: clientMutationID}, nil
}

// closeIssueInput is the CloseIssueInput input.
type closeIssueInput struct {
	IssueID          gql.ID
	StateReason      *string
	DuplicateIssueID *gql.ID
	ClientMutationID *string
}

// CloseIssue closes an issue (as COMPLETED unless stateReason says
// otherwise), as PATCH .../issues/{issue_number} with state closed.
func (q *root) CloseIssue(ctx context.Context, args struct{ Input closeIssueInput }) (*issuePayload, error) {
	in := args.Input
	t, err := q.handler(ctx).target(ctx, in.IssueID, false)
	if err != nil {
		return nil, err
	}
	closed := issues.StateClosed
	c := issues.Changes{State: &closed}
	if in.StateReason != nil {
		reason := strings.ToLower(*in.StateReason)
		c.StateReason = &reason
	}
	return q.handler(ctx).update(ctx, t, c, "CloseIssue", in.ClientMutationID)
}

// reopenIssueInput is the ReopenIssueInput input.
type reopenIssueInput struct {
	IssueID          gql.ID
	ClientMutationID *string
}

// ReopenIssue reopens an issue, as PATCH .../issues/{issue_number} with
// state open.
func (q *root) ReopenIssue(ctx context.Context, args struct{ Input reopenIssueInput }) (*issuePayload, error) {
	t, err := q.handler(ctx).target(ctx, args.Input.IssueID, false)
	if err != nil {
		return nil, err
	}
	open := issues.StateOpen
	return q.handler(ctx).update(ctx, t, issues.Changes{State: &open}, "ReopenIssue", args.Input.ClientMutationID)
}

// addCommentInput is the AddCommentInput input.
type addCommentInput struct {
	SubjectID        gql.ID
	Body             string
	ClientMutationID *string
}

// addCommentPayload resolves AddCommentPayload.
type addCommentPayload struct {
	edge             *edge[*commentResolver]
	subject          node
	clientMutationID *string
}

func (p *addCommentPayload) CommentEdge() *edge[*commentResolver] { return p.edge }
func (p *addCommentPayload) Subject() *nodeResolver               { return &nodeResolver{p.subject} }
func (p *addCommentPayload) ClientMutationID() *string            { return p.clientMutationID }

// AddComment comments on an issue or pull request through
// issues.Service.CreateComment, as POST .../issues/{issue_number}/comments
// (a locked one takes comments from triagers only).
func (q *root) AddComment(ctx context.Context, args struct{ Input addCommentInput }) (*addCommentPayload, error) {
	in := args.Input
	h := q.handler(ctx)
	t, err := h.target(ctx, in.SubjectID, true)
	if err != nil {
		return nil, err
	}
	if err := checkText("Body", in.Body, issues.MaxBody, true); err != nil {
		return nil, err
	}
	actor, triage, err := h.writer(ctx, t.repo, issuesWrite, "AddComment")
	if err != nil {
		return nil, err
	}
	c, err := h.Issues.CreateComment(ctx, t.repo.r, actor, t.number(), in.Body, triage)
	if err != nil {
		return nil, serviceError(err)
	}
	if t, err = h.reload(ctx, t); err != nil {
		return nil, err
	}
	comment := &commentResolver{h: h, c: c, repo: t.repo}
	return &addCommentPayload{edge: &edge[*commentResolver]{cursor: cursorAt(t.is.Comments - 1), node: comment},
		subject: t.resolver(h), clientMutationID: in.ClientMutationID}, nil
}

// labelsInput is the input of the label mutations.
type labelsInput struct {
	LabelableID      gql.ID
	LabelIDs         []gql.ID
	ClientMutationID *string
}

// labelablePayload resolves the label mutations' payloads.
type labelablePayload struct {
	labelable        labelable
	clientMutationID *string
}

func (p *labelablePayload) Labelable() *labelableResolver { return &labelableResolver{p.labelable} }
func (p *labelablePayload) ClientMutationID() *string     { return p.clientMutationID }

// AddLabelsToLabelable adds labels to an issue or pull request through
// issues.Service.IssueLabels, as POST .../issues/{issue_number}/labels:
// triagers only.
func (q *root) AddLabelsToLabelable(ctx context.Context, args struct{ Input labelsInput }) (*labelablePayload, error) {
	return q.handler(ctx).relabel(ctx, args.Input, false, "AddLabelsToLabelable")
}

// RemoveLabelsFromLabelable takes labels off an issue or pull request,
// as DELETE .../issues/{issue_number}/labels/{name} for each; triagers
// only.
func (q *root) RemoveLabelsFromLabelable(ctx context.Context, args struct{ Input labelsInput }) (*labelablePayload, error) {
	return q.handler(ctx).relabel(ctx, args.Input, true, "RemoveLabelsFromLabelable")
}

// removeLabels takes the named labels off the target, one change each
// (as REST's DELETE of one label), so that a concurrent change to its
// other labels stays (gh issue edit adds and removes at once); a label
// the issue does not have is no error.
func (h *Handler) removeLabels(ctx context.Context, t *issueTarget, actor *accounts.Account, names []string) error {
	for _, name := range names {
		if !slices.ContainsFunc(t.is.Labels, func(lb *issues.Label) bool { return strings.EqualFold(lb.Name, name) }) {
			continue
		}
		_, err := h.Issues.IssueLabels(ctx, t.repo.r, actor, t.number(), nil, false, name)
		if e, ok := errors.AsType[*apierr.Error](err); ok && e.Status == http.StatusNotFound {
			continue // taken off meanwhile
		} else if err != nil {
			return err
		}
	}
	return nil
}

// relabel adds or removes the input's labels.
func (h *Handler) relabel(ctx context.Context, in labelsInput, remove bool, mutation string) (*labelablePayload, error) {
	t, err := h.target(ctx, in.LabelableID, true)
	if err != nil {
		return nil, err
	}
	names, err := h.labelNames(ctx, t.repo.r, in.LabelIDs)
	if err != nil {
		return nil, err
	}
	actor, triage, err := h.writer(ctx, t.repo, labelsWrite, mutation)
	if err != nil {
		return nil, err
	}
	if !triage {
		return nil, refusal(requestFrom(ctx).principal, mutation)
	}
	if remove {
		err = h.removeLabels(ctx, t, actor, names)
	} else {
		_, err = h.Issues.IssueLabels(ctx, t.repo.r, actor, t.number(), names, false, "")
	}
	if err != nil {
		return nil, serviceError(err)
	}
	if t, err = h.reload(ctx, t); err != nil {
		return nil, err
	}
	return &labelablePayload{labelable: t.resolver(h).(labelable), clientMutationID: in.ClientMutationID}, nil
}
