package issues

import (
	"context"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// Filter selects and orders a repository's issues.
type Filter struct {
	State string // open, closed or all
	// Labels are names the issue must all carry; AnyLabels names of which
	// it carries one at least (GraphQL's labels filter).
	Labels, AnyLabels []string
	// IssuesOnly leaves pull requests out (GraphQL's issues connection).
	IssuesOnly bool
	// Assignee is a user id, AssigneeNone or AssigneeAny; 0 for no filter.
	Assignee int64
	// Creator and Mentioned are a user id and login; 0 and "" for none.
	Creator   int64
	Mentioned string
	Since     *time.Time
	// Milestone is a milestone number, "*" (any), "none" or "".
	Milestone string
	Sort      string // created, updated or comments
	Desc      bool
	Limit     int
	Offset    int
}

// Assignee filter values besides a user id.
const (
	AssigneeNone int64 = -1
	AssigneeAny  int64 = -2
)

// query is a SQL WHERE clause under construction.
type query struct {
	where []string
	args  []any
}

func (q *query) add(cond string, args ...any) {
	for _, a := range args {
		q.args = append(q.args, a)
		cond = strings.Replace(cond, "?", "$"+strconv.Itoa(len(q.args)), 1)
	}
	q.where = append(q.where, cond)
}

// conditions adds the filter's conditions on issues aliased i, in the
// database's dialect.
func (f Filter) conditions(q *query, dialect store.Dialect) {
	if f.State != "all" {
		q.add(`i.state = ?`, f.State)
	}
	for _, name := range f.Labels {
		q.add(`EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id AND lower(l.name) = lower(?))`, name)
	}
	if len(f.AnyLabels) > 0 {
		names := make([]any, len(f.AnyLabels))
		for i, name := range f.AnyLabels {
			names[i] = strings.ToLower(name)
		}
		q.add(`EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id WHERE il.issue_id = i.id AND lower(l.name) IN (`+
			strings.TrimSuffix(strings.Repeat("?, ", len(names)), ", ")+`))`, names...)
	}
	if f.IssuesOnly {
		q.add(`i.is_pull_request = ?`, false)
	}
	switch {
	case f.Assignee == AssigneeNone:
		q.add(`NOT EXISTS (SELECT 1 FROM issue_assignees ia WHERE ia.issue_id = i.id)`)
	case f.Assignee == AssigneeAny:
		q.add(`EXISTS (SELECT 1 FROM issue_assignees ia WHERE ia.issue_id = i.id)`)
	case f.Assignee != 0:
		q.add(`EXISTS (SELECT 1 FROM issue_assignees ia WHERE ia.issue_id = i.id AND ia.user_id = ?)`, f.Assignee)
	}
	if f.Creator != 0 {
		q.add(`i.user_id = ?`, f.Creator)
	}
	if f.Mentioned != "" {
		like := "%@" + strings.ToLower(f.Mentioned) + "%"
		q.add(`(`+Folded(dialect, "i.body")+` LIKE ? OR EXISTS (SELECT 1 FROM issue_comments c WHERE c.issue_id = i.id AND lower(c.body) LIKE ?))`, like, like)
	}
	switch f.Milestone {
	case "":
	case "none":
		q.add(`i.milestone_id IS NULL`)
	case "*":
		q.add(`i.milestone_id IS NOT NULL`)
	default:
		n, _ := strconv.ParseInt(f.Milestone, 10, 64) // checked by the handler
		q.add(`i.milestone_id IN (SELECT m.id FROM milestones m WHERE m.repository_id = i.repository_id AND m.number = ?)`, n)
	}
	if f.Since != nil {
		q.add(`i.updated_at >= ?`, *f.Since)
	}
}

// order is the ORDER BY of the filter's sort and direction.
func (f Filter) order() string {
	dir := " ASC"
	if f.Desc {
		dir = " DESC"
	}
	switch f.Sort {
	case "updated":
		return "i.updated_at" + dir + ", i.id" + dir
	case "comments":
		return "i.comments" + dir + ", i.id" + dir
	}
	return "i.id" + dir
}

// List returns a page of the repository's issues matching the filter
// and whether more follow. The first page of a state in creation order
// reads an index range (issues_state_id).
func (s *Service) List(ctx context.Context, repo *repos.Repository, f Filter) ([]*Issue, bool, error) {
	q := &query{}
	q.add(`i.repository_id = ?`, repo.ID)
	f.conditions(q, s.DB.Dialect)
	return s.page(ctx, repo, q, f)
}

// Count counts the repository's issues matching the filter (its page
// and order aside).
func (s *Service) Count(ctx context.Context, repo *repos.Repository, f Filter) (int, error) {
	q := &query{}
	q.add(`i.repository_id = ?`, repo.ID)
	f.conditions(q, s.DB.Dialect)
	var n int
	err := s.DB.QueryRowContext(ctx, `SELECT count(*) FROM issues i WHERE `+strings.Join(q.where, " AND "), q.args...).Scan(&n)
	return n, store.Normalize(err)
}

// page runs q with the filter's order and page and completes the issues.
func (s *Service) page(ctx context.Context, repo *repos.Repository, q *query, f Filter) ([]*Issue, bool, error) {
	n := len(q.args)
	q.args = append(q.args, f.Limit+1, f.Offset)
	list, err := collect(scanIssue)(s.DB.QueryContext(ctx, `SELECT `+issueColumns+` FROM issues i WHERE `+strings.Join(q.where, " AND ")+
		` ORDER BY `+f.order()+` LIMIT $`+strconv.Itoa(n+1)+` OFFSET $`+strconv.Itoa(n+2), q.args...))
	if err != nil {
		return nil, false, err
	}
	more := len(list) > f.Limit
	if more {
		list = list[:f.Limit]
	}
	if repo != nil {
		return list, more, newLoader(s.DB, repo).issues(ctx, list)
	}
	_, err = s.completeAcross(ctx, list)
	return list, more, err
}

// completeAcross completes issues of several repositories: their
// people, labels, milestones and the rest in one loader's fixed number
// of queries (issueParts), their repositories in one more (a search's
// page of 30 issues may hold 30 repositories: a round trip each cost
// most of a PostgreSQL search's time under load), then the authors'
// associations, which depend on each repository, per repository (no
// query when the author owns it). It returns those repositories, by id.
func (s *Service) completeAcross(ctx context.Context, list []*Issue) (map[int64]*repos.Repository, error) {
	shared := newLoader(s.DB, nil)
	if err := shared.issueParts(ctx, list); err != nil {
		return nil, err
	}
	var order []int64
	byRepo := map[int64][]*Issue{}
	for _, is := range list {
		if byRepo[is.RepoID] == nil {
			order = append(order, is.RepoID)
		}
		byRepo[is.RepoID] = append(byRepo[is.RepoID], is)
	}
	out, err := repos.ByIDs(ctx, s.DB, order)
	if err != nil {
		return nil, err
	}
	for _, id := range order {
		repo := out[id]
		if repo == nil { // deleted since the issues were read
			return nil, store.ErrNotFound
		}
		l := newLoader(s.DB, repo)
		l.accounts = shared.accounts
		if err := l.associations(ctx, byRepo[id]); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// RepoOf returns the repository of an issue listed across repositories.
func (s *Service) RepoOf(ctx context.Context, is *Issue) (*repos.Repository, error) {
	return repos.ByID(ctx, s.DB, is.RepoID)
}

// Which of a user's issues a list across repositories shows.
const (
	WhichAssigned   = "assigned"
	WhichCreated    = "created"
	WhichMentioned  = "mentioned"
	WhichSubscribed = "subscribed"
	WhichAll        = "all"
)

// Across lists issues across the repositories the user can reach: for
// which, the issues assigned to them, created by them, mentioning them,
// any of those (subscribed), or every issue (all); in the repositories
// of the organization orgID when it is not 0, and only in repositories
// visible says the user can read (checked per issue, so a page may be
// shorter than the limit).
func (s *Service) Across(ctx context.Context, userID int64, login, which string, orgID int64, f Filter, visible func(*repos.Repository) (bool, error)) ([]*Issue, bool, error) {
	q := &query{}
	switch which {
	case WhichCreated:
		q.add(`i.user_id = ?`, userID)
	case WhichMentioned:
		f.Mentioned = login
	case WhichSubscribed:
		like := "%@" + strings.ToLower(login) + "%"
		q.add(`(i.user_id = ? OR EXISTS (SELECT 1 FROM issue_assignees ia WHERE ia.issue_id = i.id AND ia.user_id = ?) OR `+
			Folded(s.DB.Dialect, "i.body")+` LIKE ?)`, userID, userID, like)
	case WhichAll:
		q.add(`i.repository_id IN (SELECT r.id FROM repositories r WHERE r.owner_id = ? OR r.owner_id IN (SELECT org_id FROM org_members WHERE user_id = ?)
			OR r.id IN (SELECT repository_id FROM repo_grants WHERE user_id = ?))`, userID, userID, userID)
	default:
		q.add(`EXISTS (SELECT 1 FROM issue_assignees ia WHERE ia.issue_id = i.id AND ia.user_id = ?)`, userID)
	}
	if orgID != 0 {
		q.add(`i.repository_id IN (SELECT r.id FROM repositories r WHERE r.owner_id = ?)`, orgID)
	}
	f.conditions(q, s.DB.Dialect)
	list, more, err := s.page(ctx, nil, q, f)
	if err != nil {
		return nil, false, err
	}
	out := list[:0]
	for _, is := range list {
		repo, err := repos.ByID(ctx, s.DB, is.RepoID)
		if err != nil {
			return nil, false, store.Normalize(err)
		}
		if ok, err := visible(repo); err != nil {
			return nil, false, err
		} else if ok {
			out = append(out, is)
		}
	}
	return out, more, nil
}
