package issues

import (
	"context"
	"database/sql"
	"errors"

	"forgeapi/internal/accounts"
	"forgeapi/internal/reactions"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// issueColumns are the columns scanIssue reads, of issues aliased i.
const issueColumns = `i.id, i.repository_id, i.number, i.is_pull_request, i.title, i.body, i.state, i.state_reason,
	i.locked, i.active_lock_reason, i.user_id, i.closed_by_id, i.milestone_id, i.comments, i.created_at, i.updated_at, i.closed_at, i.merged_at`

type scanner = store.Scanner

func scanIssue(s scanner) (*Issue, error) {
	is := &Issue{}
	err := s.Scan(&is.ID, &is.RepoID, &is.Number, &is.PullRequest, &is.Title, &is.Body, &is.State, &is.StateReason,
		&is.Locked, &is.LockReason, &is.userID, &is.closedByID, &is.milestoneID, &is.Comments, &is.CreatedAt, &is.UpdatedAt, &is.ClosedAt, &is.MergedAt)
	return is, err
}

// loader completes issues, comments and milestones with their people,
// labels and milestones, each account read once.
type loader struct {
	q        store.Q
	repo     *repos.Repository
	accounts map[int64]*accounts.Account
	assoc    map[int64]string
	miles    map[int64]*Milestone
}

func newLoader(q store.Q, repo *repos.Repository) *loader {
	return &loader{q: q, repo: repo, accounts: map[int64]*accounts.Account{}, assoc: map[int64]string{}, miles: map[int64]*Milestone{}}
}

// account is the account of id, nil when id is nil or the account is gone.
func (l *loader) account(ctx context.Context, id *int64) (*accounts.Account, error) {
	if id == nil {
		return nil, nil
	}
	if a, ok := l.accounts[*id]; ok {
		return a, nil
	}
	a, err := accounts.ByID(ctx, l.q, *id)
	if errors.Is(err, store.ErrNotFound) {
		a, err = nil, nil
	}
	l.accounts[*id] = a
	return a, err
}

// association is the platform's author_association of a user with the
// repository: OWNER, MEMBER (of the owning organization), COLLABORATOR or
// NONE.
func (l *loader) association(ctx context.Context, a *accounts.Account) (string, error) {
	if a == nil {
		return "NONE", nil
	}
	if v, ok := l.assoc[a.ID]; ok {
		return v, nil
	}
	v := "NONE"
	switch {
	case a.ID == l.repo.Owner.ID:
		v = "OWNER"
	default:
		perm, err := repos.CollaboratorPermission(ctx, l.q, l.repo.ID, a.ID)
		if err != nil {
			return "", err
		}
		if perm != "" {
			v = "COLLABORATOR"
		} else if l.repo.Owner.IsOrg() {
			role, err := accounts.MemberRole(ctx, l.q, l.repo.Owner.ID, a.ID)
			if err != nil {
				return "", err
			}
			if role != "" {
				v = "MEMBER"
			}
		}
	}
	l.assoc[a.ID] = v
	return v, nil
}

// issues completes the issues: people, milestone, labels and assignees.
// A page costs a fixed number of queries whatever its length: one each
// for its labels, its assignees, the accounts of its authors, closers
// and assignees, their associations, and its milestones.
func (l *loader) issues(ctx context.Context, list []*Issue) error {
	if err := l.issueParts(ctx, list); err != nil {
		return err
	}
	return l.associations(ctx, list)
}

// issueParts completes the issues but for their authors' associations
// (associations): it does not read the loader's repository, so one
// loader may complete the issues of several repositories with it, in
// the same fixed number of queries.
func (l *loader) issueParts(ctx context.Context, list []*Issue) error {
	if len(list) == 0 {
		return nil
	}
	byID := map[int64]*Issue{}
	ids := make([]any, 0, len(list))
	var people, miles []int64
	for _, is := range list {
		byID[is.ID] = is
		ids = append(ids, is.ID)
		is.Labels, is.Assignees = []*Label{}, []*accounts.Account{}
		people = appendID(appendID(people, is.userID), is.closedByID)
		miles = appendID(miles, is.milestoneID)
	}
	pairs, err := l.assigneePairs(ctx, ids)
	if err != nil {
		return err
	}
	for _, p := range pairs {
		people = append(people, p.user)
	}
	if err := l.prefetch(ctx, people); err != nil {
		return err
	}
	if err := l.prefetchMilestones(ctx, miles); err != nil {
		return err
	}
	for _, is := range list {
		is.User, is.ClosedBy = l.accounts[deref(is.userID)], l.accounts[deref(is.closedByID)]
		is.Milestone = l.miles[deref(is.milestoneID)]
	}
	for _, p := range pairs {
		if a := l.accounts[p.user]; a != nil {
			byID[p.issue].Assignees = append(byID[p.issue].Assignees, a)
		}
	}
	if err := l.issueReactions(ctx, list); err != nil {
		return err
	}
	if err := l.dependencies(ctx, byID, ids); err != nil {
		return err
	}
	return l.labels(ctx, byID, ids)
}

// associations sets the author_association of the issues, which must
// be of the loader's repository and have their User (issueParts).
func (l *loader) associations(ctx context.Context, list []*Issue) error {
	authors := make([]*accounts.Account, 0, len(list))
	for _, is := range list {
		authors = append(authors, is.User)
	}
	if err := l.prefetchAssociations(ctx, authors); err != nil {
		return err
	}
	for _, is := range list {
		var err error
		if is.Association, err = l.association(ctx, is.User); err != nil {
			return err
		}
	}
	return nil
}

// issueReactions counts the issues' reactions, in one query.
func (l *loader) issueReactions(ctx context.Context, list []*Issue) error {
	ids := make([]int64, len(list))
	for i, is := range list {
		ids[i] = is.ID
	}
	counts, err := reactions.CountsFor(ctx, l.q, reactions.Issue, ids)
	for _, is := range list {
		is.Reactions = counts[is.ID]
	}
	return err
}

// appendID appends *id when id is not nil.
func appendID(ids []int64, id *int64) []int64 {
	if id == nil {
		return ids
	}
	return append(ids, *id)
}

// deref is *id, 0 (no account or milestone has it) for nil.
func deref(id *int64) int64 {
	if id == nil {
		return 0
	}
	return *id
}

// prefetch reads the accounts of ids not read yet, in one query; an id
// whose account is gone is cached as nil.
func (l *loader) prefetch(ctx context.Context, ids []int64) error {
	var missing []any
	for _, id := range ids {
		if _, ok := l.accounts[id]; !ok {
			l.accounts[id] = nil
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	rows, err := l.q.QueryContext(ctx, store.Dynamic+`SELECT `+accounts.JoinedColumns+` FROM accounts a WHERE a.id IN `+in(len(missing)), missing...)
	if err != nil {
		return store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		a := &accounts.Account{}
		if err := rows.Scan(a.ScanDest()...); err != nil {
			return store.Normalize(err)
		}
		l.accounts[a.ID] = a
	}
	return store.Normalize(rows.Err())
}

// prefetchAssociations reads the associations (association) of the
// accounts not read yet: one query for the repository's collaborators
// among them and, for an organization's repository, one for its
// members.
func (l *loader) prefetchAssociations(ctx context.Context, list []*accounts.Account) error {
	var missing []any
	for _, a := range list {
		if a == nil {
			continue
		}
		if _, ok := l.assoc[a.ID]; ok {
			continue
		}
		l.assoc[a.ID] = "NONE"
		if a.ID == l.repo.Owner.ID {
			l.assoc[a.ID] = "OWNER"
			continue
		}
		missing = append(missing, a.ID)
	}
	if len(missing) == 0 {
		return nil
	}
	if l.repo.Owner.IsOrg() {
		members, err := collect(scanID)(l.q.QueryContext(ctx, store.Dynamic+`SELECT user_id FROM org_members WHERE org_id = $1 AND user_id IN `+
			store.In(2, len(missing)), append([]any{l.repo.Owner.ID}, missing...)...))
		if err != nil {
			return err
		}
		for _, id := range members {
			l.assoc[id] = "MEMBER"
		}
	}
	collaborators, err := collect(scanID)(l.q.QueryContext(ctx, store.Dynamic+`SELECT user_id FROM repo_collaborators WHERE repository_id = $1 AND user_id IN `+
		store.In(2, len(missing)), append([]any{l.repo.ID}, missing...)...))
	if err != nil {
		return err
	}
	for _, id := range collaborators {
		l.assoc[id] = "COLLABORATOR"
	}
	return nil
}

// in is "($1, $2, ...)" for n values.
func in(n int) string { return store.In(1, n) }

func (l *loader) labels(ctx context.Context, byID map[int64]*Issue, ids []any) error {
	rows, err := l.q.QueryContext(ctx, store.Dynamic+`SELECT il.issue_id, `+labelColumns+` FROM issue_labels il JOIN labels l ON l.id = il.label_id
		WHERE il.issue_id IN `+in(len(ids))+` ORDER BY lower(l.name)`, ids...)
	if err != nil {
		return store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		var issueID int64
		lb := &Label{}
		if err := rows.Scan(&issueID, &lb.ID, &lb.RepoID, &lb.Name, &lb.Color, &lb.Description, &lb.Default); err != nil {
			return store.Normalize(err)
		}
		byID[issueID].Labels = append(byID[issueID].Labels, lb)
	}
	return store.Normalize(rows.Err())
}

// assigneePair is one assignee of one issue.
type assigneePair struct{ issue, user int64 }

// assigneePairs reads the assignees of the issues of ids.
func (l *loader) assigneePairs(ctx context.Context, ids []any) ([]assigneePair, error) {
	return collect(func(s scanner) (assigneePair, error) {
		var p assigneePair
		return p, s.Scan(&p.issue, &p.user)
	})(l.q.QueryContext(ctx, store.Dynamic+`SELECT issue_id, user_id FROM issue_assignees WHERE issue_id IN `+in(len(ids))+` ORDER BY user_id`, ids...))
}

// prefetchMilestones reads the milestones of ids not read yet with their
// counts and creators: three queries at most.
func (l *loader) prefetchMilestones(ctx context.Context, ids []int64) error {
	var missing []any
	for _, id := range ids {
		if _, ok := l.miles[id]; !ok {
			l.miles[id] = nil
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	list, err := collect(scanMilestone)(l.q.QueryContext(ctx, store.Dynamic+`SELECT `+milestoneColumns+` FROM milestones m WHERE m.id IN `+in(len(missing)), missing...))
	if err != nil {
		return err
	}
	var creators []int64
	for _, m := range list {
		l.miles[m.ID] = m
		creators = appendID(creators, m.creatorID)
	}
	rows, err := l.q.QueryContext(ctx, store.Dynamic+`SELECT milestone_id, COALESCE(SUM(CASE WHEN state = 'open' THEN 1 ELSE 0 END), 0),
		COALESCE(SUM(CASE WHEN state = 'closed' THEN 1 ELSE 0 END), 0) FROM issues WHERE milestone_id IN `+in(len(missing))+
		` GROUP BY milestone_id`, missing...)
	if err != nil {
		return store.Normalize(err)
	}
	for rows.Next() {
		var id int64
		var open, closed int
		if err := rows.Scan(&id, &open, &closed); err != nil {
			rows.Close()
			return store.Normalize(err)
		}
		if m := l.miles[id]; m != nil {
			m.OpenIssues, m.ClosedIssues = open, closed
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return store.Normalize(err)
	}
	if err := l.prefetch(ctx, creators); err != nil {
		return err
	}
	for _, m := range list {
		m.Creator = l.accounts[deref(m.creatorID)]
	}
	return nil
}

func (l *loader) completeMilestone(ctx context.Context, m *Milestone) error {
	var err error
	if m.Creator, err = l.account(ctx, m.creatorID); err != nil {
		return err
	}
	return store.Normalize(l.q.QueryRowContext(ctx, `SELECT
		COALESCE(SUM(CASE WHEN state = 'open' THEN 1 ELSE 0 END), 0), COALESCE(SUM(CASE WHEN state = 'closed' THEN 1 ELSE 0 END), 0)
		FROM issues WHERE milestone_id = $1`, m.ID).Scan(&m.OpenIssues, &m.ClosedIssues))
}

// comments completes comments with their authors: two or three
// queries whatever their number (accounts, associations).
func (l *loader) comments(ctx context.Context, list []*Comment) error {
	var people []int64
	for _, c := range list {
		people = appendID(people, c.userID)
	}
	if err := l.prefetch(ctx, people); err != nil {
		return err
	}
	authors := make([]*accounts.Account, 0, len(list))
	for _, c := range list {
		c.User = l.accounts[deref(c.userID)]
		authors = append(authors, c.User)
	}
	if err := l.prefetchAssociations(ctx, authors); err != nil {
		return err
	}
	ids := make([]int64, len(list))
	for i, c := range list {
		var err error
		if c.Association, err = l.association(ctx, c.User); err != nil {
			return err
		}
		ids[i] = c.ID
	}
	counts, err := reactions.CountsFor(ctx, l.q, reactions.IssueComment, ids)
	for _, c := range list {
		c.Reactions = counts[c.ID]
	}
	return err
}

const labelColumns = `l.id, l.repository_id, l.name, l.color, l.description, l.is_default`

func scanLabel(s scanner) (*Label, error) {
	lb := &Label{}
	err := s.Scan(&lb.ID, &lb.RepoID, &lb.Name, &lb.Color, &lb.Description, &lb.Default)
	return lb, err
}

const milestoneColumns = `m.id, m.repository_id, m.number, m.title, m.description, m.state, m.due_on, m.closed_at, m.creator_id, m.created_at, m.updated_at`

func scanMilestone(s scanner) (*Milestone, error) {
	m := &Milestone{}
	err := s.Scan(&m.ID, &m.RepoID, &m.Number, &m.Title, &m.Description, &m.State, &m.DueOn, &m.ClosedAt, &m.creatorID, &m.CreatedAt, &m.UpdatedAt)
	return m, err
}

const commentColumns = `c.id, c.repository_id, c.issue_id, i.number, c.user_id, c.body, c.created_at, c.updated_at`

func scanComment(s scanner) (*Comment, error) {
	c := &Comment{}
	err := s.Scan(&c.ID, &c.RepoID, &c.IssueID, &c.IssueNumber, &c.userID, &c.Body, &c.CreatedAt, &c.UpdatedAt)
	return c, err
}

// collect returns a function that scans every row of a query with scan.
func collect[T any](scan func(scanner) (T, error)) func(*sql.Rows, error) ([]T, error) {
	return func(rows *sql.Rows, err error) ([]T, error) { return store.ScanAll(rows, err, scan) }
}

// issueByNumber loads the repository's issue with its details.
func issueByNumber(ctx context.Context, q store.Q, repo *repos.Repository, number int64) (*Issue, error) {
	is, err := scanIssue(q.QueryRowContext(ctx, `SELECT `+issueColumns+` FROM issues i WHERE i.repository_id = $1 AND i.number = $2`, repo.ID, number))
	if err != nil {
		return nil, store.Normalize(err)
	}
	return is, newLoader(q, repo).issues(ctx, []*Issue{is})
}

// labelByName is the repository's label of that name (any case).
func labelByName(ctx context.Context, q store.Q, repoID int64, name string) (*Label, error) {
	lb, err := scanLabel(q.QueryRowContext(ctx, `SELECT `+labelColumns+` FROM labels l WHERE l.repository_id = $1 AND lower(l.name) = lower($2)`, repoID, name))
	return lb, store.Normalize(err)
}

// milestoneByNumber is the repository's milestone with its counts.
func milestoneByNumber(ctx context.Context, q store.Q, repo *repos.Repository, number int64) (*Milestone, error) {
	m, err := scanMilestone(q.QueryRowContext(ctx, `SELECT `+milestoneColumns+` FROM milestones m WHERE m.repository_id = $1 AND m.number = $2`, repo.ID, number))
	if err != nil {
		return nil, store.Normalize(err)
	}
	return m, newLoader(q, repo).completeMilestone(ctx, m)
}

// commentByID is the repository's comment.
func commentByID(ctx context.Context, q store.Q, repo *repos.Repository, id int64) (*Comment, error) {
	c, err := scanComment(q.QueryRowContext(ctx, `SELECT `+commentColumns+` FROM issue_comments c JOIN issues i ON i.id = c.issue_id
		WHERE c.id = $1 AND c.repository_id = $2`, id, repo.ID))
	if err != nil {
		return nil, store.Normalize(err)
	}
	return c, newLoader(q, repo).comments(ctx, []*Comment{c})
}

// nextNumber allocates the repository's next issue (or milestone) number
// in the transaction: the counter row's update holds its lock until the
// transaction ends, so concurrent creates get distinct numbers.
func nextNumber(ctx context.Context, tx store.Q, repoID int64, milestone bool) (int64, error) {
	query := `INSERT INTO issue_counters (repository_id, last_issue, last_milestone) VALUES ($1, 1, 0)
		ON CONFLICT (repository_id) DO UPDATE SET last_issue = issue_counters.last_issue + 1 RETURNING last_issue`
	if milestone {
		query = `INSERT INTO issue_counters (repository_id, last_issue, last_milestone) VALUES ($1, 0, 1)
		ON CONFLICT (repository_id) DO UPDATE SET last_milestone = issue_counters.last_milestone + 1 RETURNING last_milestone`
	}
	var n int64
	err := tx.QueryRowContext(ctx, query, repoID).Scan(&n)
	return n, store.Normalize(err)
}
