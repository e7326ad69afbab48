package pulls

import (
	"context"
	"fmt"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/store/storetest"
)

// TestCompletePageQueries: completing a page of pull requests (Find's
// completeAll), each labelled, assigned and with a review requested,
// costs as many queries for 30 as for 3, and completes each.
func TestCompletePageQueries(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.OpenSQLite(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	octo, err := accounts.Create(ctx, db, accounts.NewAccount{Type: accounts.TypeUser, Login: "octo"})
	must(err)
	rev, err := accounts.Create(ctx, db, accounts.NewAccount{Type: accounts.TypeUser, Login: "rev"})
	must(err)
	now := store.Now()
	var repoID, labelID int64
	must(db.QueryRowContext(ctx, `INSERT INTO repositories (owner_id, name, created_at, updated_at) VALUES ($1, 'app', $2, $2) RETURNING id`,
		octo.ID, now).Scan(&repoID))
	repo, err := repos.ByID(ctx, db, repoID)
	must(err)
	must(db.QueryRowContext(ctx, `INSERT INTO labels (repository_id, name, color, created_at) VALUES ($1, 'bug', 'ededed', $2) RETURNING id`,
		repoID, now).Scan(&labelID))
	for n := 1; n <= 30; n++ {
		var issueID, pullID int64
		must(db.QueryRowContext(ctx, `INSERT INTO issues (repository_id, number, is_pull_request, title, body, user_id, created_at, updated_at)
			VALUES ($1, $2, TRUE, $3, '', $4, $5, $5) RETURNING id`, repoID, n, fmt.Sprintf("Pull %d", n), octo.ID, now).Scan(&issueID))
		must(db.QueryRowContext(ctx, `INSERT INTO pull_requests (issue_id, repository_id, number, head_repository_id, head_ref, head_sha, base_ref, base_sha)
			VALUES ($1, $2, $3, $2, $4, 'h', 'main', 'b') RETURNING id`, issueID, repoID, n, fmt.Sprintf("f%d", n)).Scan(&pullID))
		_, err = db.ExecContext(ctx, `INSERT INTO issue_labels (issue_id, label_id) VALUES ($1, $2)`, issueID, labelID)
		must(err)
		_, err = db.ExecContext(ctx, `INSERT INTO issue_assignees (issue_id, user_id) VALUES ($1, $2)`, issueID, octo.ID)
		must(err)
		_, err = db.ExecContext(ctx, `INSERT INTO pull_request_review_requests (pull_request_id, user_id, created_at) VALUES ($1, $2, $3)`,
			pullID, rev.ID, now)
		must(err)
	}
	complete := func(limit int) int {
		t.Helper()
		rows, err := db.QueryContext(ctx, `SELECT `+prColumns+`, p.issue_id FROM pull_requests p WHERE p.repository_id = $1
			ORDER BY p.number LIMIT $2`, repoID, limit)
		page, err := store.ScanAll(rows, err, func(sc scanner) (pullRow, error) {
			r := pullRow{p: &PullRequest{}}
			p := r.p
			var number int64
			return r, sc.Scan(&p.ID, &number, &p.headRepoID, &p.HeadRef, &p.HeadSHA, &p.BaseRef, &p.BaseSHA, &p.Draft,
				&p.MergedAt, &p.mergedByID, &p.MergeCommitSHA, &p.Mergeable, &p.MergeableState, &p.checkDue,
				&p.Commits, &p.Additions, &p.Deletions, &p.ChangedFiles, &r.issueID)
		})
		must(err)
		q := &storetest.CountingQ{Q: db}
		must(completeAll(ctx, q, repo, page))
		for _, r := range page {
			p := r.p
			if p.Issue == nil || p.Issue.User == nil || p.Issue.User.Login != "octo" || len(p.Issue.Labels) != 1 || len(p.Issue.Assignees) != 1 ||
				len(p.RequestedReviewers) != 1 || p.RequestedReviewers[0].Login != "rev" || p.HeadRepo != repo {
				t.Fatalf("pull request %d not completed: %+v", p.ID, p)
			}
		}
		return q.N
	}
	if few, many := complete(3), complete(30); few != many {
		t.Errorf("queries: %d for 3 pull requests, %d for 30", few, many)
	}
}
