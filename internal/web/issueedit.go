package web

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/console"
	"forgeapi/internal/issues"
	"forgeapi/internal/store"
)

// maxOptions is how many labels and milestones the edit form offers.
const maxOptions = 100

// issueEdit is the edit form of an issue's page: its title and body for
// its author and for triagers, and for triagers its labels, assignees and
// milestone. State closes or reopens it.
type issueEdit struct {
	Action, StateAction string
	Title, Body         string
	Triage              bool
	Labels              []labelOption
	Milestones          []milestoneOption
	Assignees           string // logins separated by spaces
	NoMilestone         bool
	Open                bool
}

type labelOption struct {
	Name    string
	Checked bool
}

type milestoneOption struct {
	Number   int64
	Title    string
	Selected bool
}

// issueAction is where an issue's edit forms post: "" the edit, "state"
// closing and reopening.
func issueAction(repoPath string, number int64, what string) string {
	a := console.RepoPrefix + repoPath + "/issues/" + strconv.FormatInt(number, 10)
	if what != "" {
		a += "/" + what
	}
	return a
}

// editForm returns the edit form of the issue for the visitor, nil when
// they may not edit it (anonymous, or neither its author nor a triager).
func (h *Handler) editForm(ctx context.Context, v *repoVisit, is *issues.Issue) (*issueEdit, error) {
	if v.x.Login() == "" {
		return nil, nil
	}
	triage, err := issues.CanTriage(ctx, h.DB, v.x.Principal(), v.role, v.repo)
	if err != nil {
		return nil, err
	}
	if !triage && (is.User == nil || is.User.ID != v.x.Principal().Account.ID) {
		return nil, nil
	}
	path := header(v, "").Path
	e := &issueEdit{Action: issueAction(path, is.Number, ""), StateAction: issueAction(path, is.Number, "state"),
		Title: is.Title, Body: is.Body, Triage: triage, Open: is.State == issues.StateOpen, NoMilestone: is.Milestone == nil}
	if !triage {
		return e, nil
	}
	labels, err := h.Issues.Labels(ctx, v.repo.ID, maxOptions, 0)
	if err != nil {
		return nil, err
	}
	for _, l := range labels {
		e.Labels = append(e.Labels, labelOption{Name: l.Name, Checked: slices.ContainsFunc(is.Labels, func(x *issues.Label) bool { return x.ID == l.ID })})
	}
	milestones, err := h.Issues.Milestones(ctx, v.repo, "open", "", "", maxOptions, 0)
	if err != nil {
		return nil, err
	}
	if is.Milestone != nil && !slices.ContainsFunc(milestones, func(m *issues.Milestone) bool { return m.ID == is.Milestone.ID }) {
		milestones = append(milestones, is.Milestone) // a closed one stays chosen
	}
	for _, m := range milestones {
		e.Milestones = append(e.Milestones, milestoneOption{Number: m.Number, Title: m.Title,
			Selected: is.Milestone != nil && is.Milestone.ID == m.ID})
	}
	logins := make([]string, 0, len(is.Assignees))
	for _, a := range is.Assignees {
		logins = append(logins, a.Login)
	}
	e.Assignees = strings.Join(logins, " ")
	return e, nil
}

// editIssue serves POST /console/{owner}/{repo}/issues/{number}, the edit
// form of an issue's page: what changed of the title and body (the author
// or a triager) and, for a triager, the labels, assignees and milestone,
// through issues.Service.Update as PATCH .../issues/{number} does (the
// same checks, issues events and webhooks); then back to the issue.
func (h *Handler) editIssue(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	return h.changeIssue(w, r, x, func(is *issues.Issue, triage bool) (issues.Changes, error) {
		return issueChanges(r, is, triage)
	})
}

// issueState serves POST /console/{owner}/{repo}/issues/{number}/state:
// state "closed" (with state_reason completed or not_planned) or "open",
// as PATCH .../issues/{number} with state does.
func (h *Handler) issueState(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	return h.changeIssue(w, r, x, func(*issues.Issue, bool) (issues.Changes, error) {
		state, reason := r.PostForm.Get("state"), r.PostForm.Get("state_reason")
		var f apierr.Fields
		if state != issues.StateOpen && state != issues.StateClosed {
			f.Add("Issue", "state", apierr.CodeInvalid)
		}
		c := issues.Changes{State: &state}
		switch {
		case state == issues.StateClosed && (reason == issues.ReasonCompleted || reason == issues.ReasonNotPlanned):
			c.StateReason = &reason
		case state == issues.StateClosed && reason != "":
			f.Add("Issue", "state_reason", apierr.CodeInvalid)
		}
		return c, f.Err()
	})
}

// changeIssue reads the issue of a form's path for the signed-in
// visitor, applies the changes that read returns, and sends the visitor
// back to the issue.
func (h *Handler) changeIssue(w http.ResponseWriter, r *http.Request, x console.Visitor,
	read func(is *issues.Issue, triage bool) (issues.Changes, error)) error {
	ctx := r.Context()
	v, n, err := h.formTarget(ctx, x, r, apierr.New(http.StatusForbidden, "Sign in to edit."))
	if err != nil {
		return err
	}
	is, err := h.Issues.Get(ctx, v.repo, n)
	if err != nil || is.PullRequest {
		return hidden(x, orNotFound(err))
	}
	triage, err := issues.CanTriage(ctx, h.DB, x.Principal(), v.role, v.repo)
	if err != nil {
		return err
	}
	c, err := read(is, triage)
	if err != nil {
		return err
	}
	actor, err := accounts.ByID(ctx, h.DB, x.Principal().Account.ID)
	if err != nil {
		return err
	}
	if _, err := h.Issues.Update(ctx, v.repo, actor, n, c, triage); err != nil {
		return hidden(x, err)
	}
	http.Redirect(w, r, header(v, "").Path+"/issues/"+strconv.FormatInt(n, 10), http.StatusSeeOther)
	return nil
}

// issueChanges reads the edit form: the title and body when they
// changed, and with triage (the form then has triage=1) the labels,
// assignees and milestone; validated as PATCH .../issues/{number}.
func issueChanges(r *http.Request, is *issues.Issue, triage bool) (issues.Changes, error) {
	f := r.PostForm
	var c issues.Changes
	var errs apierr.Fields
	if title := strings.TrimSpace(f.Get("title")); title == "" {
		errs.Add("Issue", "title", apierr.CodeMissingField)
	} else if title != is.Title {
		errs.MaxLength("Issue", "title", title, issues.MaxTitle)
		c.Title = &title
	}
	if body := strings.ReplaceAll(f.Get("body"), "\r\n", "\n"); body != is.Body {
		errs.MaxLength("Issue", "body", body, issues.MaxBody)
		c.Body = &body
	}
	if err := errs.Err(); err != nil || !triage || f.Get("triage") != "1" {
		return c, err
	}
	labels := f["labels"]
	if labels == nil {
		labels = []string{}
	}
	c.Labels = &labels
	assignees := strings.FieldsFunc(f.Get("assignees"), func(r rune) bool { return r == ' ' || r == ',' || r == '\n' || r == '\r' || r == '\t' })
	if assignees == nil {
		assignees = []string{}
	}
	c.Assignees = &assignees
	switch ms := f.Get("milestone"); ms {
	case "":
		c.ClearMilestone = is.Milestone != nil
	default:
		n, err := strconv.ParseInt(ms, 10, 64)
		if err != nil {
			return c, apierr.Invalid("Issue", "milestone", apierr.CodeInvalid)
		}
		if is.Milestone == nil || is.Milestone.Number != n {
			c.Milestone = &n
		}
	}
	return c, nil
}

// orNotFound is err, or store.ErrNotFound for none (what a path names is
// not what the form edits).
func orNotFound(err error) error {
	if err == nil {
		return store.ErrNotFound
	}
	return err
}

// newIssuePage is the form of a new issue.
type newIssuePage struct {
	RepoHeader
	Action string
}

// newIssue serves /{owner}/{repo}/issues/new: the form of a new issue for
// a signed-in visitor (an anonymous one signs in first and comes back).
func (h *Handler) newIssue(w http.ResponseWriter, r *http.Request, v *repoVisit) error {
	if v.x.Login() == "" {
		http.Redirect(w, r, console.LoginPath+"?"+url.Values{"return_to": {r.URL.Path}}.Encode(), http.StatusSeeOther)
		return nil
	}
	hd := header(v, "issues")
	return h.render(w, r, v.x, "newissue", "New issue · "+v.repo.FullName(), newIssuePage{RepoHeader: hd,
		Action: console.RepoPrefix + hd.Path + "/issues"})
}

// createIssue serves POST /console/{owner}/{repo}/issues, the new issue's
// form: the signed-in user opens the issue (title and body) as POST
// .../issues does (issues.Service.Create: blocks, the issues opened event
// and webhook) and is sent to its page.
func (h *Handler) createIssue(w http.ResponseWriter, r *http.Request, x console.Visitor) error {
	ctx := r.Context()
	if x.Login() == "" {
		return apierr.New(http.StatusForbidden, "Sign in to open an issue.")
	}
	v, err := h.visitRepo(ctx, x, r.PathValue("owner"), r.PathValue("repo"))
	if err != nil {
		return err
	}
	n := issues.NewIssue{Title: strings.TrimSpace(r.PostForm.Get("title")), Body: strings.ReplaceAll(r.PostForm.Get("body"), "\r\n", "\n")}
	var errs apierr.Fields
	if n.Title == "" {
		errs.Add("Issue", "title", apierr.CodeMissingField)
	} else {
		errs.MaxLength("Issue", "title", n.Title, issues.MaxTitle)
	}
	errs.MaxLength("Issue", "body", n.Body, issues.MaxBody)
	if err := errs.Err(); err != nil {
		return err
	}
	actor, err := accounts.ByID(ctx, h.DB, x.Principal().Account.ID)
	if err != nil {
		return err
	}
	triage, err := issues.CanTriage(ctx, h.DB, x.Principal(), v.role, v.repo)
	if err != nil {
		return err
	}
	is, err := h.Issues.Create(ctx, v.repo, actor, n, triage)
	if err != nil {
		return hidden(x, err)
	}
	http.Redirect(w, r, header(v, "").Path+"/issues/"+strconv.FormatInt(is.Number, 10), http.StatusSeeOther)
	return nil
}
