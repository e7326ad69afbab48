package issues

import (
	"context"
	"errors"
	"maps"
	"slices"
	"strings"

	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// NewIssue is what creating an issue asks for; Labels, Assignees and
// Milestone are applied only for callers who may triage.
type NewIssue struct {
	Title, Body string
	Labels      []string
	Assignees   []string
	Milestone   *int64
}

// Changes is what an update asks for; nil fields are left as they are.
type Changes struct {
	Title, Body, State, StateReason *string
	Labels, Assignees               *[]string
	Milestone                       *int64
	ClearMilestone                  bool
}

// Create opens an issue with the next number of the repository and emits
// issues opened and IssuesEvent, then labeled, assigned and milestoned
// for what a triager opened it with.
func (s *Service) Create(ctx context.Context, repo *repos.Repository, actor *accounts.Account, n NewIssue, triage bool) (*Issue, error) {
	var out *Issue
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		if err := accounts.CheckNotBlocked(ctx, tx, repo.Owner, actor.ID); err != nil {
			return err
		}
		number, err := nextNumber(ctx, tx, repo.ID, false)
		if err != nil {
			return err
		}
		now := tx.Now()
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO issues (repository_id, number, title, body, user_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $6) RETURNING id`, repo.ID, number, n.Title, n.Body, actor.ID, now).Scan(&id); err != nil {
			return store.Normalize(err)
		}
		if out, err = issueByNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		var ev []issueEvent
		if triage {
			if ev, err = triageChanges(ctx, tx, repo, out, n.asChanges()); err != nil {
				return err
			}
			if out, err = issueByNumber(ctx, tx, repo, number); err != nil {
				return err
			}
		}
		if err := s.emitIssue(ctx, tx, repo, actor, "opened", out, nil); err != nil {
			return err
		}
		for _, e := range ev {
			if err := s.emitIssue(ctx, tx, repo, actor, e.action, out, e.extra); err != nil {
				return err
			}
		}
		return nil
	})
	return out, err
}

// asChanges is the labels, assignees and milestone a new issue is opened
// with, as an update of the bare issue: its events are the labeled,
// assigned and milestoned the platform sends after opened.
func (n NewIssue) asChanges() Changes {
	c := Changes{Milestone: n.Milestone}
	if n.Labels != nil {
		c.Labels = &n.Labels
	}
	if n.Assignees != nil {
		c.Assignees = &n.Assignees
	}
	return c
}

// applyTriage sets an issue's labels, assignees and milestone where
// given (nil leaves them).
func applyTriage(ctx context.Context, tx store.Q, repo *repos.Repository, issueID int64, labels, assignees []string, milestone *int64, clear bool) error {
	if labels != nil {
		if _, _, err := setLabels(ctx, tx, repo, issueID, labels, true); err != nil {
			return err
		}
	}
	if assignees != nil {
		if err := checkAssignable(ctx, tx, repo, assignees); err != nil {
			return err
		}
		if _, _, err := setAssignees(ctx, tx, repo, issueID, assignees, true); err != nil {
			return err
		}
	}
	if milestone != nil || clear {
		var id *int64
		if milestone != nil {
			m, err := milestoneByNumber(ctx, tx, repo, *milestone)
			if errors.Is(err, store.ErrNotFound) {
				return apierr.Invalid("Issue", "milestone", apierr.CodeInvalid)
			} else if err != nil {
				return err
			}
			id = &m.ID
		}
		if _, err := tx.ExecContext(ctx, `UPDATE issues SET milestone_id = $1 WHERE id = $2`, id, issueID); err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

// Get returns the repository's issue; store.ErrNotFound when none.
func (s *Service) Get(ctx context.Context, repo *repos.Repository, number int64) (*Issue, error) {
	return issueByNumber(ctx, s.DB, repo, number)
}

// Update changes an issue and emits one issues event per change:
// edited (title, body), closed or reopened, labeled and unlabeled,
// assigned and unassigned, milestoned and demilestoned. Its author may
// change its title, body and state; anyone else needs triage, which
// labels, assignees and milestone need too (ignored without it).
func (s *Service) Update(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, c Changes, triage bool) (*Issue, error) {
	var out *Issue
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		before, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if !triage && (before.User == nil || before.User.ID != actor.ID) {
			return apierr.Forbidden("Must have push access to repository.")
		}
		after := *before
		applyChanges(&after, c, actor)
		now := tx.Now()
		if _, err := tx.ExecContext(ctx, `UPDATE issues SET title = $1, body = $2, state = $3, state_reason = $4, closed_at = $5,
			closed_by_id = $6, updated_at = $7 WHERE id = $8`, after.Title, after.Body, after.State, after.StateReason, after.ClosedAt,
			idOf(after.ClosedBy), now, before.ID); err != nil {
			return store.Normalize(err)
		}
		var ev []issueEvent
		if triage {
			if ev, err = triageChanges(ctx, tx, repo, before, c); err != nil {
				return err
			}
		}
		if out, err = issueByNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		return s.emitChanges(ctx, tx, repo, actor, before, out, ev)
	})
	return out, err
}

// applyChanges writes the title, body and state changes into is.
func applyChanges(is *Issue, c Changes, actor *accounts.Account) {
	if c.Title != nil {
		is.Title = *c.Title
	}
	if c.Body != nil {
		is.Body = *c.Body
	}
	if c.State != nil && *c.State != is.State {
		is.State = *c.State
		if is.State == StateClosed {
			now := store.Now()
			is.ClosedAt, is.ClosedBy, is.StateReason = &now, actor, ReasonCompleted
		} else {
			is.ClosedAt, is.ClosedBy, is.StateReason = nil, nil, ReasonReopened
		}
	}
	if c.StateReason != nil && is.State == StateClosed {
		is.StateReason = *c.StateReason
	}
}

func idOf(a *accounts.Account) *int64 {
	if a == nil {
		return nil
	}
	return &a.ID
}

// issueEvent is one labeled, unlabeled, assigned, unassigned, milestoned
// or demilestoned change, with its payload key.
type issueEvent struct {
	action string
	extra  map[string]any
}

// triageChanges applies label, assignee and milestone changes and
// returns their events.
func triageChanges(ctx context.Context, tx *store.Tx, repo *repos.Repository, before *Issue, c Changes) ([]issueEvent, error) {
	var ev []issueEvent
	u := urlsOf(httpapi.BaseURL(ctx), repo)
	if c.Labels != nil {
		added, removed, err := setLabels(ctx, tx, repo, before.ID, *c.Labels, true)
		if err != nil {
			return nil, err
		}
		ev = append(ev, labelEvents(u, added, removed)...)
	}
	if c.Assignees != nil {
		if err := checkAssignable(ctx, tx, repo, *c.Assignees); err != nil {
			return nil, err
		}
		added, removed, err := setAssignees(ctx, tx, repo, before.ID, *c.Assignees, true)
		if err != nil {
			return nil, err
		}
		ev = append(ev, assigneeEvents(u, added, removed)...)
	}
	if c.Milestone != nil || c.ClearMilestone {
		if err := applyTriage(ctx, tx, repo, before.ID, nil, nil, c.Milestone, c.ClearMilestone); err != nil {
			return nil, err
		}
		ev = append(ev, milestoneEvents(ctx, tx, u, repo, before, c)...)
	}
	return ev, nil
}

func labelEvents(u urls, added, removed []*Label) []issueEvent {
	var ev []issueEvent
	for _, lb := range added {
		ev = append(ev, issueEvent{"labeled", map[string]any{"label": toLabelJSON(u, lb)}})
	}
	for _, lb := range removed {
		ev = append(ev, issueEvent{"unlabeled", map[string]any{"label": toLabelJSON(u, lb)}})
	}
	return ev
}

func assigneeEvents(u urls, added, removed []*accounts.Account) []issueEvent {
	var ev []issueEvent
	for _, a := range added {
		ev = append(ev, issueEvent{"assigned", map[string]any{"assignee": accounts.ToSimpleUser(u.base, a)}})
	}
	for _, a := range removed {
		ev = append(ev, issueEvent{"unassigned", map[string]any{"assignee": accounts.ToSimpleUser(u.base, a)}})
	}
	return ev
}

// milestoneEvents is demilestoned for the milestone the issue had and
// milestoned for the one it gets, when they differ.
func milestoneEvents(ctx context.Context, tx *store.Tx, u urls, repo *repos.Repository, before *Issue, c Changes) []issueEvent {
	var ev []issueEvent
	if before.Milestone != nil && (c.ClearMilestone || (c.Milestone != nil && *c.Milestone != before.Milestone.Number)) {
		ev = append(ev, issueEvent{"demilestoned", map[string]any{"milestone": toMilestoneJSON(u, before.Milestone)}})
	}
	if c.Milestone != nil && (before.Milestone == nil || *c.Milestone != before.Milestone.Number) {
		if m, err := milestoneByNumber(ctx, tx, repo, *c.Milestone); err == nil {
			ev = append(ev, issueEvent{"milestoned", map[string]any{"milestone": toMilestoneJSON(u, m)}})
		}
	}
	return ev
}

// emitChanges emits the events of an update.
func (s *Service) emitChanges(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, before, after *Issue, ev []issueEvent) error {
	changes := map[string]any{}
	if before.Title != after.Title {
		changes["title"] = map[string]any{"from": before.Title}
	}
	if before.Body != after.Body {
		changes["body"] = map[string]any{"from": before.Body}
	}
	if len(changes) > 0 {
		if err := s.emitIssue(ctx, tx, repo, actor, "edited", after, map[string]any{"changes": changes}); err != nil {
			return err
		}
	}
	if before.State != after.State {
		action := "closed"
		if after.State == StateOpen {
			action = "reopened"
		}
		if err := s.emitIssue(ctx, tx, repo, actor, action, after, nil); err != nil {
			return err
		}
	}
	for _, e := range ev {
		if err := s.emitIssue(ctx, tx, repo, actor, e.action, after, e.extra); err != nil {
			return err
		}
	}
	return nil
}

// feedActions are the issues actions the feeds show as IssuesEvent.
var feedActions = []string{"opened", "edited", "closed", "reopened", "assigned", "unassigned", "labeled", "unlabeled"}

// emitIssue emits the issues webhook event (and IssuesEvent for the
// actions the feeds show) with the issue as it is now, and records the
// issue event the platform keeps for the action. For a pull request's
// row it sends pull_request through PullRequests instead, as the
// platform does.
func (s *Service) emitIssue(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, action string, is *Issue, extra map[string]any) error {
	if r, ok := recordFor(action, is, extra); ok {
		if err := RecordEvent(ctx, tx, is, actor, r); err != nil {
			return err
		}
	}
	if is.PullRequest && s.PullRequests != nil {
		return s.PullRequests.EmitForIssue(ctx, tx, repo, actor, action, is.Number, extra)
	}
	payload := map[string]any{"action": action, "issue": toIssueJSON(urlsOf(httpapi.BaseURL(ctx), repo), is)}
	maps.Copy(payload, extra)
	e := &events.Event{HookEvent: "issues", HookPayload: payload, Actor: actor, Repo: repo, Public: !repo.Private}
	if slices.Contains(feedActions, action) {
		e.FeedType, e.FeedPayload = "IssuesEvent", maps.Clone(payload)
	}
	return s.Events.Emit(ctx, tx, e)
}

// LockReasons are the reasons a lock may give.
var LockReasons = []string{"off-topic", "too heated", "resolved", "spam"}

// Lock locks (or unlocks) an issue's conversation and emits issues
// locked (unlocked); nothing when it already is.
func (s *Service) Lock(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, lock bool, reason string) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		is, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		if is.Locked == lock {
			return nil
		}
		if !lock {
			reason = ""
		}
		if _, err := tx.ExecContext(ctx, `UPDATE issues SET locked = $1, active_lock_reason = $2, updated_at = $3 WHERE id = $4`,
			lock, reason, tx.Now(), is.ID); err != nil {
			return store.Normalize(err)
		}
		if is, err = issueByNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		action := "locked"
		if !lock {
			action = "unlocked"
		}
		return s.emitIssue(ctx, tx, repo, actor, action, is, nil)
	})
}

// CanTriage reports whether the principal may triage the repository's
// issues: push access, or a collaborator's triage permission.
func CanTriage(ctx context.Context, q store.Q, p *auth.Principal, role auth.Role, repo *repos.Repository) (bool, error) {
	if role >= auth.RoleWrite {
		return true, nil
	}
	if p.Anonymous() || (p.Token != nil && p.Token.Kind == auth.KindInstallation) {
		return false, nil
	}
	if p.FineGrained() && !p.Token.Selects(repo.ID, repo.Owner.ID) {
		return false, nil
	}
	perm, err := repos.CollaboratorPermission(ctx, q, repo.ID, p.Account.ID)
	return perm == repos.CollaboratorTriage, err
}

// assignable reports whether the user may be assigned the repository's
// issues: triage access or more.
func assignable(ctx context.Context, q store.Q, repo *repos.Repository, user *accounts.Account) (bool, error) {
	p := &auth.Principal{Account: &auth.Account{ID: user.ID, Login: user.Login, Type: user.Type}}
	role, err := access.RepoRole(ctx, q, p, repo)
	if err != nil {
		return false, err
	}
	return CanTriage(ctx, q, p, role, repo)
}

// checkAssignable is a 422 naming the first login that cannot be
// assigned.
func checkAssignable(ctx context.Context, q store.Q, repo *repos.Repository, logins []string) error {
	for _, login := range logins {
		a, err := accounts.ByLogin(ctx, q, login)
		if err != nil && !errors.Is(err, store.ErrNotFound) {
			return err
		}
		ok := false
		if a != nil {
			if ok, err = assignable(ctx, q, repo, a); err != nil {
				return err
			}
		}
		if !ok {
			return apierr.Validation(apierr.FieldError{Resource: "Issue", Field: "assignees", Code: apierr.CodeInvalid, Value: login})
		}
	}
	return nil
}

// setAssignees adds (or, replace, sets) an issue's assignees among the
// assignable logins; it returns who was added and who removed.
func setAssignees(ctx context.Context, tx store.Q, repo *repos.Repository, issueID int64, logins []string, replace bool) (added, removed []*accounts.Account, err error) {
	current, err := assigneesOf(ctx, tx, issueID)
	if err != nil {
		return nil, nil, err
	}
	want := map[int64]bool{}
	for _, login := range logins {
		a, err := accounts.ByLogin(ctx, tx, login)
		if errors.Is(err, store.ErrNotFound) {
			continue
		} else if err != nil {
			return nil, nil, err
		}
		if ok, err := assignable(ctx, tx, repo, a); err != nil {
			return nil, nil, err
		} else if !ok || want[a.ID] {
			continue
		}
		want[a.ID] = true
		if !slices.ContainsFunc(current, func(c *accounts.Account) bool { return c.ID == a.ID }) {
			if _, err := tx.ExecContext(ctx, `INSERT INTO issue_assignees (issue_id, user_id) VALUES ($1, $2)`, issueID, a.ID); err != nil {
				return nil, nil, store.Normalize(err)
			}
			added = append(added, a)
		}
	}
	if replace {
		for _, c := range current {
			if !want[c.ID] {
				if removed, err = removeAssignee(ctx, tx, issueID, c, removed); err != nil {
					return nil, nil, err
				}
			}
		}
	}
	return added, removed, nil
}

func removeAssignee(ctx context.Context, tx store.Q, issueID int64, a *accounts.Account, removed []*accounts.Account) ([]*accounts.Account, error) {
	res, err := tx.ExecContext(ctx, `DELETE FROM issue_assignees WHERE issue_id = $1 AND user_id = $2`, issueID, a.ID)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if n, _ := res.RowsAffected(); n > 0 {
		removed = append(removed, a)
	}
	return removed, nil
}

func assigneesOf(ctx context.Context, q store.Q, issueID int64) ([]*accounts.Account, error) {
	ids, err := collect(scanID)(q.QueryContext(ctx, `SELECT user_id FROM issue_assignees WHERE issue_id = $1`, issueID))
	if err != nil {
		return nil, err
	}
	out := make([]*accounts.Account, 0, len(ids))
	for _, id := range ids {
		a, err := accounts.ByID(ctx, q, id)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	return out, nil
}

// AddAssignees adds the assignable among logins to an issue (others are
// ignored, as on the platform) and emits issues assigned for each.
func (s *Service) AddAssignees(ctx context.Context, repo *repos.Repository, actor *accounts.Account, number int64, logins []string, remove bool) (*Issue, error) {
	var out *Issue
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		is, err := issueByNumber(ctx, tx, repo, number)
		if err != nil {
			return err
		}
		var added, removed []*accounts.Account
		if remove {
			for _, login := range logins {
				for _, a := range is.Assignees {
					if strings.EqualFold(a.Login, login) {
						if removed, err = removeAssignee(ctx, tx, is.ID, a, removed); err != nil {
							return err
						}
					}
				}
			}
		} else if added, _, err = setAssignees(ctx, tx, repo, is.ID, logins, false); err != nil {
			return err
		}
		if out, err = issueByNumber(ctx, tx, repo, number); err != nil {
			return err
		}
		return s.emitEach(ctx, tx, repo, actor, out, assigneeEvents(urlsOf(httpapi.BaseURL(ctx), repo), added, removed))
	})
	return out, err
}

func (s *Service) emitEach(ctx context.Context, tx *store.Tx, repo *repos.Repository, actor *accounts.Account, is *Issue, ev []issueEvent) error {
	if len(ev) > 0 {
		if _, err := tx.ExecContext(ctx, `UPDATE issues SET updated_at = $1 WHERE id = $2`, tx.Now(), is.ID); err != nil {
			return store.Normalize(err)
		}
	}
	for _, e := range ev {
		if err := s.emitIssue(ctx, tx, repo, actor, e.action, is, e.extra); err != nil {
			return err
		}
	}
	return nil
}

// Assignees lists who may be assigned the repository's issues: the
// owner, collaborators with triage or more, and the owning
// organization's owners and, when its base permission is write or admin,
// members; by login.
func (s *Service) Assignees(ctx context.Context, repo *repos.Repository) ([]*accounts.Account, error) {
	ids, err := collect(scanID)(s.DB.QueryContext(ctx, `SELECT user_id FROM repo_collaborators WHERE repository_id = $1 AND permission <> 'pull'
		UNION SELECT user_id FROM org_members WHERE org_id = $2 UNION SELECT id FROM accounts WHERE id = $2 AND type = 'User'`, repo.ID, repo.Owner.ID))
	if err != nil {
		return nil, err
	}
	var out []*accounts.Account
	for _, id := range ids {
		a, err := accounts.ByID(ctx, s.DB, id)
		if err != nil {
			return nil, err
		}
		if ok, err := assignable(ctx, s.DB, repo, a); err != nil {
			return nil, err
		} else if ok {
			out = append(out, a)
		}
	}
	slices.SortFunc(out, func(a, b *accounts.Account) int {
		return strings.Compare(strings.ToLower(a.Login), strings.ToLower(b.Login))
	})
	return out, nil
}

// IsAssignable reports whether the login may be assigned the
// repository's issues.
func (s *Service) IsAssignable(ctx context.Context, repo *repos.Repository, login string) (bool, error) {
	a, err := accounts.ByLogin(ctx, s.DB, login)
	if errors.Is(err, store.ErrNotFound) {
		return false, nil
	} else if err != nil {
		return false, err
	}
	return assignable(ctx, s.DB, repo, a)
}

func scanID(s scanner) (int64, error) {
	var id int64
	return id, s.Scan(&id)
}
