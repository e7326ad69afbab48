package pulls

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"forgeapi/internal/accounts"
	"forgeapi/internal/issues"
	"forgeapi/internal/repos"
	"forgeapi/internal/search"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// The states a Query selects, as the platform's GraphQL names them.
const (
	QueryOpen   = "OPEN"
	QueryClosed = "CLOSED" // closed without a merge
	QueryMerged = "MERGED"
)

// Query selects a repository's pull requests as the platform's GraphQL
// pullRequests connection and its search do: States (any of QueryOpen,
// QueryClosed, QueryMerged; none is all), HeadRef and BaseRef branch
// names, Labels (any of those names), the logins of the Author, an
// Assignee and a reviewer asked (ReviewRequested), Draft, and Text, which
// the title or the body holds (any case); "", nil and none select all.
// They are ordered by Order (created, updated or comments; created by
// default) in the direction Desc, ties by number.
type Query struct {
	States                            []string
	HeadRef, BaseRef                  string
	Labels                            []string
	Author, Assignee, ReviewRequested string
	Draft                             *bool
	Text                              string
	Order                             string
	Desc                              bool
}

// Find returns the page of the repository's pull requests q selects
// that window chooses, [start, end) of their total, with its offset and
// that total; each completed as Get completes one. The page costs the
// same queries whatever its size: a count, its rows, its issue rows,
// labels, assignees and review requests one each, and one per distinct
// person and head repository on it.
func (s *Service) Find(ctx context.Context, repo *repos.Repository, q Query, window func(total int) (start, end int, err error)) (page []*PullRequest, offset, total int, err error) {
	// where holds the conditions on the issue row (i) alone, onPull
	// those that read the pull request's row (p) too.
	var where, onPull []string
	args := []any{repo.ID}
	arg := func(v any) string { args = append(args, v); return "$" + strconv.Itoa(len(args)) }
	if states, issueOnly := stateConditions(q.States); issueOnly {
		where = append(where, states...)
	} else {
		onPull = append(onPull, states...)
	}
	if q.HeadRef != "" {
		onPull = append(onPull, "p.head_ref = "+arg(q.HeadRef))
	}
	if q.BaseRef != "" {
		onPull = append(onPull, "p.base_ref = "+arg(q.BaseRef))
	}
	if len(q.Labels) > 0 {
		names := make([]string, len(q.Labels))
		for i, l := range q.Labels {
			names[i] = arg(strings.ToLower(l))
		}
		where = append(where, `EXISTS (SELECT 1 FROM issue_labels il JOIN labels l ON l.id = il.label_id
			WHERE il.issue_id = i.id AND lower(l.name) IN (`+strings.Join(names, ", ")+`))`)
	}
	const account = `(SELECT id FROM accounts WHERE lower(login) = lower(%s))`
	if q.Author != "" {
		where = append(where, "i.user_id = "+fmt.Sprintf(account, arg(q.Author)))
	}
	if q.Assignee != "" {
		where = append(where, "EXISTS (SELECT 1 FROM issue_assignees ia WHERE ia.issue_id = i.id AND ia.user_id = "+
			fmt.Sprintf(account, arg(q.Assignee))+")")
	}
	if q.ReviewRequested != "" {
		onPull = append(onPull, "EXISTS (SELECT 1 FROM pull_request_review_requests rr WHERE rr.pull_request_id = p.id AND rr.user_id = "+
			fmt.Sprintf(account, arg(q.ReviewRequested))+")")
	}
	if q.Draft != nil {
		onPull = append(onPull, "p.draft = "+arg(*q.Draft))
	}
	if q.Text != "" {
		like := arg(search.Like(q.Text))
		d := s.DB.Dialect
		where = append(where, `(`+strings.Replace(search.LikeOp(d, issues.Folded(d, "i.title")), "?", like, 1)+
			` OR `+strings.Replace(search.LikeOp(d, issues.Folded(d, "i.body")), "?", like, 1)+`)`)
	}
	conds := append(append([]string{"p.repository_id = $1"}, where...), onPull...)
	from := ` FROM pull_requests p JOIN issues i ON i.id = p.issue_id WHERE ` + strings.Join(conds, " AND ")
	if err := s.DB.QueryRowContext(ctx, store.Dynamic+`SELECT count(*)`+countFrom(from, where, onPull), args...).Scan(&total); err != nil {
		return nil, 0, 0, store.Normalize(err)
	}
	start, end, err := window(total)
	if err != nil || start >= end {
		return []*PullRequest{}, start, total, err
	}
	// Creation order is number order (a pull request made of an issue
	// keeps the issue's number and creation), which the number index
	// walks without a sort.
	order := map[string]string{"updated": "i.updated_at", "comments": "i.comments"}[q.Order]
	if order == "" {
		order = "p.number"
	}
	dir := " ASC"
	if q.Desc {
		dir = " DESC"
	}
	page, err = s.completePage(ctx, repo, store.Dynamic+`SELECT `+prColumns+`, p.issue_id`+from+` ORDER BY `+order+dir+`, p.number`+dir+
		` LIMIT `+arg(end-start)+` OFFSET `+arg(start), args...)
	if err != nil {
		return nil, 0, 0, err
	}
	return page, start, total, nil
}

// completePage runs query, which selects prColumns and the issue row's
// id of a page of the repository's pull requests, and completes them in
// a fixed number of queries (completeAll), in the query's order.
func (s *Service) completePage(ctx context.Context, repo *repos.Repository, query string, args ...any) ([]*PullRequest, error) {
	rows, err := s.DB.QueryContext(ctx, query, args...)
	found, err := store.ScanAll(rows, err, func(sc scanner) (pullRow, error) {
		r := pullRow{p: &PullRequest{}}
		var number int64
		p := r.p
		err := sc.Scan(&p.ID, &number, &p.headRepoID, &p.HeadRef, &p.HeadSHA, &p.BaseRef, &p.BaseSHA, &p.Draft,
			&p.MergedAt, &p.mergedByID, &p.MergeCommitSHA, &p.Mergeable, &p.MergeableState, &p.checkDue,
			&p.Commits, &p.Additions, &p.Deletions, &p.ChangedFiles, &r.issueID)
		return r, err
	})
	if err != nil {
		return nil, err
	}
	if err := completeAll(ctx, s.DB, repo, found); err != nil {
		return nil, err
	}
	page := make([]*PullRequest, len(found))
	for i, r := range found {
		page[i] = r.p
	}
	return page, nil
}

// pullRow is a pull request's row with the id of its issue row.
type pullRow struct {
	p       *PullRequest
	issueID int64
}

// stateConditions are the conditions of the states (none for all of
// them); issueOnly reports that they read the issue row alone.
func stateConditions(states []string) (conds []string, issueOnly bool) {
	var or []string
	issueOnly = true
	for _, st := range states {
		switch st {
		case QueryOpen:
			or = append(or, "i.state = 'open'")
		case QueryClosed:
			or, issueOnly = append(or, "(i.state = 'closed' AND p.merged_at IS NULL)"), false
		case QueryMerged:
			or, issueOnly = append(or, "p.merged_at IS NOT NULL"), false
		}
	}
	if len(or) == 0 || len(or) == 3 {
		return nil, true
	}
	return []string{"(" + strings.Join(or, " OR ") + ")"}, issueOnly
}

// countFrom is the FROM clause Find counts with: from (the pull
// requests joined with their issue rows) when a condition reads the
// pull request's row, else the repository's issue rows marked as pull
// requests alone, which an index counts without reading a row (the
// gh pr list count of 10,000 open pull requests: about 1 ms instead of 5
// on SQLite).
func countFrom(from string, where, onPull []string) string {
	if len(onPull) > 0 {
		return from
	}
	return ` FROM issues i WHERE ` + strings.Join(append([]string{"i.repository_id = $1", "i.is_pull_request = TRUE"}, where...), " AND ")
}

// completeAll is complete for a page of pull requests, with a fixed
// number of queries.
func completeAll(ctx context.Context, q store.Q, repo *repos.Repository, page []pullRow) error {
	if len(page) == 0 {
		return nil
	}
	issueIDs := make([]int64, len(page))
	byID := make(map[int64]*PullRequest, len(page))
	for i, r := range page {
		issueIDs[i] = r.issueID
		byID[r.p.ID] = r.p
	}
	rows, err := issues.ByIDs(ctx, q, repo, issueIDs)
	if err != nil {
		return err
	}
	people := map[int64]*accounts.Account{}
	person := func(id *int64) (*accounts.Account, error) {
		if id == nil {
			return nil, nil
		}
		if a, ok := people[*id]; ok {
			return a, nil
		}
		a, err := accounts.ByID(ctx, q, *id)
		if errors.Is(err, store.ErrNotFound) {
			a, err = nil, nil
		}
		people[*id] = a
		return a, err
	}
	heads := map[int64]*repos.Repository{repo.ID: repo}
	for _, r := range page {
		p := r.p
		p.Repo, p.Issue, p.RequestedReviewers = repo, rows[r.issueID], []*accounts.Account{}
		if p.Issue == nil {
			return store.ErrNotFound
		}
		if p.MergedBy, err = person(p.mergedByID); err != nil {
			return err
		}
		if p.headRepoID == nil {
			continue
		}
		head, ok := heads[*p.headRepoID]
		if !ok {
			if head, err = repos.ByID(ctx, q, *p.headRepoID); errors.Is(err, store.ErrNotFound) {
				head, err = nil, nil
			} else if err != nil {
				return err
			}
			heads[*p.headRepoID] = head
		}
		p.HeadRepo = head
	}
	return requestedReviewersOf(ctx, q, byID, person)
}

// requestedReviewersOf loads the review requests of the pull requests
// (by id) in one query.
func requestedReviewersOf(ctx context.Context, q store.Q, byID map[int64]*PullRequest, person func(*int64) (*accounts.Account, error)) error {
	ids := make([]string, 0, len(byID))
	args := make([]any, 0, len(byID))
	for id := range byID {
		args = append(args, id)
		ids = append(ids, "$"+strconv.Itoa(len(args)))
	}
	rows, err := q.QueryContext(ctx, store.Dynamic+`SELECT rr.pull_request_id, rr.user_id FROM pull_request_review_requests rr
		JOIN accounts a ON a.id = rr.user_id WHERE rr.pull_request_id IN (`+strings.Join(ids, ", ")+`) ORDER BY lower(a.login)`, args...)
	type request struct{ pull, user int64 }
	list, err := store.ScanAll(rows, err, func(sc scanner) (request, error) {
		var r request
		return r, sc.Scan(&r.pull, &r.user)
	})
	if err != nil {
		return err
	}
	for _, r := range list {
		a, err := person(&r.user)
		if err != nil {
			return err
		}
		if a != nil {
			byID[r.pull].RequestedReviewers = append(byID[r.pull].RequestedReviewers, a)
		}
	}
	return nil
}

// ByReviewID returns the pull request of the review id, as ByNodeID
// returns one; store.ErrNotFound when no review has that id.
func (s *Service) ByReviewID(ctx context.Context, reviewID int64) (*PullRequest, error) {
	var pullID int64
	if err := s.DB.QueryRowContext(ctx, `SELECT pull_request_id FROM pull_request_reviews WHERE id = $1`, reviewID).Scan(&pullID); err != nil {
		return nil, store.Normalize(err)
	}
	return s.ByNodeID(ctx, wire.NodeID("PR", pullID))
}

// ReviewsOfPage lists the reviews of a page of the repository's pull
// requests, by pull request id, each oldest first and pending ones only
// to their authors (viewer), as Reviews lists one's: one query for the
// page, and one per distinct reviewer.
func (s *Service) ReviewsOfPage(ctx context.Context, repo *repos.Repository, page []*PullRequest, viewer int64) (map[int64][]*Review, error) {
	out := make(map[int64][]*Review, len(page))
	if len(page) == 0 {
		return out, nil
	}
	args := []any{viewer}
	ids := make([]string, len(page))
	for i, p := range page {
		args = append(args, p.ID)
		ids[i] = "$" + strconv.Itoa(len(args))
		out[p.ID] = []*Review{}
	}
	rows, err := s.DB.QueryContext(ctx, store.Dynamic+`SELECT `+reviewColumns+` FROM pull_request_reviews r
		WHERE r.pull_request_id IN (`+strings.Join(ids, ", ")+`) AND (r.state <> 'PENDING' OR r.user_id = $1) ORDER BY r.id`, args...)
	list, err := store.ScanAll(rows, err, scanReview)
	if err != nil {
		return nil, err
	}
	type person struct {
		a     *accounts.Account
		assoc string
	}
	seen := map[int64]person{}
	for _, r := range list {
		if r.userID != nil {
			known, ok := seen[*r.userID]
			if !ok {
				if known.a, known.assoc, err = people(ctx, s.DB, repo, r.userID); err != nil {
					return nil, err
				}
				seen[*r.userID] = known
			}
			r.User, r.Association = known.a, known.assoc
		} else {
			r.Association = "NONE"
		}
		out[r.PullID] = append(out[r.PullID], r)
	}
	return out, nil
}
