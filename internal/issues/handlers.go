package issues

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// actor is the calling user (an installation's bot for its tokens).
func (h *Handler) actor(r *http.Request) (*accounts.Account, error) {
	return accounts.ByID(r.Context(), h.Service.DB, auth.PrincipalFrom(r.Context()).UserID())
}

// canTriage reports whether the caller may triage the route's
// repository's issues.
func (h *Handler) canTriage(r *http.Request) (bool, error) {
	ctx := r.Context()
	return CanTriage(ctx, h.Service.DB, auth.PrincipalFrom(ctx), auth.RoleFrom(ctx), repos.From(ctx))
}

// caller returns the caller's account and whether they may triage the
// route's repository's issues.
func (h *Handler) caller(r *http.Request) (*accounts.Account, bool, error) {
	actor, err := h.actor(r)
	if err != nil {
		return nil, false, err
	}
	triage, err := h.canTriage(r)
	return actor, triage, err
}

// needTriage is a 403 unless the caller may triage.
func (h *Handler) needTriage(r *http.Request) error {
	ok, err := h.canTriage(r)
	if err == nil && !ok {
		err = apierr.Forbidden("Must have push access to repository.")
	}
	return err
}

// issueNumber is {issue_number}: a 404 when it is not a number.
func issueNumber(r *http.Request) (int64, error) {
	n, err := httpapi.PathInt64(r, "issue_number")
	if err != nil {
		return 0, apierr.NotFound()
	}
	return n, nil
}

func (h *Handler) urls(r *http.Request) urls {
	return urlsOf(httpapi.BaseURL(r.Context()), repos.From(r.Context()))
}

// issueRequest is the body of creating or updating an issue. Milestone
// is a number or null; Labels are names or label objects with a name.
type issueRequest struct {
	Title       *string         `json:"title"`
	Body        *string         `json:"body"`
	State       *string         `json:"state"`
	StateReason *string         `json:"state_reason"`
	Labels      *[]labelRef     `json:"labels"`
	Assignees   *[]string       `json:"assignees"`
	Assignee    *string         `json:"assignee"`
	Milestone   nullable[int64] `json:"milestone"`
}

// validate checks the strings and state of the body; create requires a
// title.
func (b issueRequest) validate(create bool) error {
	var f apierr.Fields
	switch {
	case b.Title == nil && create, b.Title != nil && strings.TrimSpace(*b.Title) == "":
		f.Add("Issue", "title", apierr.CodeMissingField)
	case b.Title != nil:
		f.MaxLength("Issue", "title", *b.Title, MaxTitle)
	}
	if b.Body != nil {
		f.MaxLength("Issue", "body", *b.Body, MaxBody)
	}
	if b.State != nil && *b.State != StateOpen && *b.State != StateClosed {
		f.Add("Issue", "state", apierr.CodeInvalid)
	}
	if b.StateReason != nil && *b.StateReason != ReasonCompleted && *b.StateReason != ReasonNotPlanned &&
		*b.StateReason != ReasonDuplicate && *b.StateReason != ReasonReopened {
		f.Add("Issue", "state_reason", apierr.CodeInvalid)
	}
	return f.Err()
}

// assignees is the body's assignees, with the older single assignee.
func (b issueRequest) assignees() *[]string {
	if b.Assignees != nil {
		return b.Assignees
	}
	if b.Assignee != nil {
		list := []string{}
		if *b.Assignee != "" {
			list = append(list, *b.Assignee)
		}
		return &list
	}
	return nil
}

func labelNames(refs *[]labelRef) *[]string {
	if refs == nil {
		return nil
	}
	names := make([]string, 0, len(*refs))
	for _, r := range *refs {
		names = append(names, string(r))
	}
	return &names
}

// create answers POST /repos/{owner}/{repo}/issues: 201 with the issue.
func (h *Handler) create(w http.ResponseWriter, r *http.Request) error {
	var body issueRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(true); err != nil {
		return err
	}
	actor, triage, err := h.caller(r)
	if err != nil {
		return err
	}
	n := NewIssue{Title: *body.Title}
	if body.Body != nil {
		n.Body = *body.Body
	}
	if l := labelNames(body.Labels); l != nil {
		n.Labels = *l
	}
	if a := body.assignees(); a != nil {
		n.Assignees = *a
	}
	if body.Milestone.Set && body.Milestone.Value != nil {
		n.Milestone = body.Milestone.Value
	}
	repo := repos.From(r.Context())
	is, err := h.Service.Create(r.Context(), repo, actor, n, triage)
	if err != nil {
		return err
	}
	j := toIssueJSON(h.urls(r), is)
	httpapi.WriteCreated(w, j.URL, j)
	return nil
}

// get answers GET .../issues/{issue_number}.
func (h *Handler) get(w http.ResponseWriter, r *http.Request) error {
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	is, err := h.Service.Get(r.Context(), repos.From(r.Context()), n)
	if errors.Is(err, store.ErrNotFound) {
		return h.moved(r, n)
	} else if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toIssueJSON(h.urls(r), is))
	return nil
}

// moved is the answer to a GET of an issue number that is no longer
// here: 301 to the issue where a transfer took it, when that repository
// is public (a private one stays hidden: 404), as the platform redirects
// transferred issues.
func (h *Handler) moved(r *http.Request, n int64) error {
	is, dest, err := h.Service.TransferredTo(r.Context(), repos.From(r.Context()), n)
	if errors.Is(err, store.ErrNotFound) || err == nil && (dest.Private || is.PullRequest) {
		return apierr.NotFound()
	} else if err != nil {
		return err
	}
	return apierr.Moved(r.Method, urlsOf(httpapi.BaseURL(r.Context()), dest).api+"/issues/"+strconv.FormatInt(is.Number, 10))
}

// update answers PATCH .../issues/{issue_number}.
func (h *Handler) update(w http.ResponseWriter, r *http.Request) error {
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	var body issueRequest
	if err := httpapi.DecodeJSON(r, &body); err != nil {
		return err
	}
	if err := body.validate(false); err != nil {
		return err
	}
	actor, triage, err := h.caller(r)
	if err != nil {
		return err
	}
	c := Changes{Title: body.Title, Body: body.Body, State: body.State, StateReason: body.StateReason,
		Labels: labelNames(body.Labels), Assignees: body.assignees()}
	if body.Milestone.Set {
		c.Milestone, c.ClearMilestone = body.Milestone.Value, body.Milestone.Value == nil
	}
	is, err := h.Service.Update(r.Context(), repos.From(r.Context()), actor, n, c, triage)
	if err != nil {
		return err
	}
	httpapi.WriteJSON(w, http.StatusOK, toIssueJSON(h.urls(r), is))
	return nil
}

// lock answers PUT .../lock: 204; lock_reason, when given, is one of
// LockReasons (422 otherwise).
func (h *Handler) lock(w http.ResponseWriter, r *http.Request) error {
	return h.setLock(w, r, true)
}

// unlock answers DELETE .../lock: 204.
func (h *Handler) unlock(w http.ResponseWriter, r *http.Request) error {
	return h.setLock(w, r, false)
}

func (h *Handler) setLock(w http.ResponseWriter, r *http.Request, lock bool) error {
	n, err := issueNumber(r)
	if err != nil {
		return err
	}
	var body struct {
		LockReason *string `json:"lock_reason"`
	}
	if lock {
		if err := httpapi.DecodeJSON(r, &body); err != nil {
			return err
		}
	}
	reason := ""
	if body.LockReason != nil {
		reason = *body.LockReason
		if !slicesContains(LockReasons, reason) {
			return apierr.Invalid("Issue", "lock_reason", apierr.CodeInvalid)
		}
	}
	if err := h.needTriage(r); err != nil {
		return err
	}
	actor, err := h.actor(r)
	if err != nil {
		return err
	}
	if err := h.Service.Lock(r.Context(), repos.From(r.Context()), actor, n, lock, reason); err != nil {
		return err
	}
	httpapi.NoContent(w)
	return nil
}

// filterOf reads the list query shared by every issue list: state,
// labels, since, sort, direction and the page (422 for bad values).
func filterOf(r *http.Request) (Filter, httpapi.Page, error) {
	q := r.URL.Query()
	f := Filter{State: q.Get("state"), Sort: q.Get("sort"), Desc: q.Get("direction") != "asc"}
	page, err := httpapi.ParsePage(r)
	if err != nil {
		return f, page, err
	}
	f.Limit, f.Offset = page.Limit(), page.Offset()
	if f.State == "" {
		f.State = StateOpen
	}
	if f.State != StateOpen && f.State != StateClosed && f.State != "all" {
		return f, page, apierr.Invalid("Issue", "state", apierr.CodeInvalid)
	}
	if f.Sort == "" {
		f.Sort = "created"
	}
	if f.Sort != "created" && f.Sort != "updated" && f.Sort != "comments" {
		return f, page, apierr.Invalid("Issue", "sort", apierr.CodeInvalid)
	}
	if d := q.Get("direction"); d != "" && d != "asc" && d != "desc" {
		return f, page, apierr.Invalid("Issue", "direction", apierr.CodeInvalid)
	}
	if l := q.Get("labels"); l != "" {
		for _, name := range strings.Split(l, ",") {
			if name = strings.TrimSpace(name); name != "" {
				f.Labels = append(f.Labels, name)
			}
		}
	}
	if s := q.Get("since"); s != "" {
		t, err := time.Parse(time.RFC3339, s)
		if err != nil {
			return f, page, apierr.Invalid("Issue", "since", apierr.CodeInvalid)
		}
		f.Since = &t
	}
	return f, page, nil
}

// userFilter resolves a login of the assignee, creator or mentioned
// filters; a login that names no one matches no issue (id -3).
func (h *Handler) userFilter(r *http.Request, login string) (int64, error) {
	a, err := accounts.ByLogin(r.Context(), h.Service.DB, login)
	if errors.Is(err, store.ErrNotFound) {
		return -3, nil
	}
	if err != nil {
		return 0, err
	}
	return a.ID, nil
}

// list answers GET /repos/{owner}/{repo}/issues with the filters state,
// labels, assignee (a login, none or *), creator, mentioned, since, sort
// and direction, paged with Link (next without last).
func (h *Handler) list(w http.ResponseWriter, r *http.Request) error {
	f, page, err := filterOf(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	switch a := q.Get("assignee"); a {
	case "":
	case "none":
		f.Assignee = AssigneeNone
	case "*":
		f.Assignee = AssigneeAny
	default:
		if f.Assignee, err = h.userFilter(r, a); err != nil {
			return err
		}
	}
	if c := q.Get("creator"); c != "" {
		if f.Creator, err = h.userFilter(r, c); err != nil {
			return err
		}
	}
	f.Mentioned = q.Get("mentioned")
	if f.Milestone = q.Get("milestone"); f.Milestone != "" && f.Milestone != "none" && f.Milestone != "*" {
		if _, err := strconv.ParseInt(f.Milestone, 10, 64); err != nil {
			return apierr.Invalid("Issue", "milestone", apierr.CodeInvalid)
		}
	}
	repo := repos.From(r.Context())
	list, more, err := h.Service.List(r.Context(), repo, f)
	if err != nil {
		return err
	}
	u := h.urls(r)
	out := make([]issueJSON, 0, len(list))
	for _, is := range list {
		out = append(out, toIssueJSON(u, is))
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// listMine answers GET /issues and GET /user/issues: issues across the
// repositories the caller can read, by filter (assigned, created,
// mentioned, subscribed, all; default assigned).
func (h *Handler) listMine(w http.ResponseWriter, r *http.Request) error {
	return h.listAcross(w, r, 0)
}

// listOrg answers GET /orgs/{org}/issues: listMine within the
// organization's repositories.
func (h *Handler) listOrg(w http.ResponseWriter, r *http.Request) error {
	return h.listAcross(w, r, accounts.OrgFrom(r.Context()).ID)
}

func (h *Handler) listAcross(w http.ResponseWriter, r *http.Request, orgID int64) error {
	f, page, err := filterOf(r)
	if err != nil {
		return err
	}
	which := r.URL.Query().Get("filter")
	switch which {
	case "":
		which = WhichAssigned
	case WhichAssigned, WhichCreated, WhichMentioned, WhichSubscribed, WhichAll, "repos":
	default:
		return apierr.Invalid("Issue", "filter", apierr.CodeInvalid)
	}
	if which == "repos" {
		which = WhichAll
	}
	ctx := r.Context()
	p := auth.PrincipalFrom(ctx)
	user, err := h.actor(r)
	if err != nil {
		return err
	}
	visible := func(repo *repos.Repository) (bool, error) {
		role, err := access.ListedRepoRole(ctx, h.Service.DB, p, repo)
		return role > auth.RoleNone, err
	}
	list, more, err := h.Service.Across(ctx, user.ID, user.Login, which, orgID, f, visible)
	if err != nil {
		return err
	}
	out, err := h.withRepositories(r, list)
	if err != nil {
		return err
	}
	httpapi.SetLinksMore(w, r, page, more)
	httpapi.WriteJSON(w, http.StatusOK, out)
	return nil
}

// withRepositories renders issues of several repositories, each with its
// repository object, as the lists across repositories show them.
func (h *Handler) withRepositories(r *http.Request, list []*Issue) ([]issueJSON, error) {
	ctx := r.Context()
	base := httpapi.BaseURL(ctx)
	p := auth.PrincipalFrom(ctx)
	out := make([]issueJSON, 0, len(list))
	for _, is := range list {
		repo, err := h.Service.RepoOf(ctx, is)
		if err != nil {
			return nil, err
		}
		st, err := repos.StatsOf(ctx, h.Service.DB, repo.ID)
		if err != nil {
			return nil, err
		}
		role, err := access.RepoRole(ctx, h.Service.DB, p, repo)
		if err != nil {
			return nil, err
		}
		j := toIssueJSON(urlsOf(base, repo), is)
		rj := repos.ToJSON(repos.URLsOf(ctx), repo, st, role)
		j.Repository = &rj
		out = append(out, j)
	}
	return out, nil
}
