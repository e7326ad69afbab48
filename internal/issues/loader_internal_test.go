package issues

import (
	"context"
	"fmt"
	"testing"

	"forgeapi/internal/accounts"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/store/storetest"
)

// TestLoaderQueriesPerPage: completing a page of issues, each by another
// author (member, collaborator or stranger of the owning organization)
// with two labels, an assignee and one of two milestones, costs the same
// fixed number of queries for 100 issues as for 10, and each issue gets
// its own people, association, labels and milestone.
func TestLoaderQueriesPerPage(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := storetest.OpenSQLite(t)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	org, err := accounts.Create(ctx, db, accounts.NewAccount{Type: accounts.TypeOrg, Login: "acme"})
	must(err)
	now := store.Now()
	var repoID int64
	must(db.QueryRowContext(ctx, `INSERT INTO repositories (owner_id, name, created_at, updated_at) VALUES ($1, 'app', $2, $2) RETURNING id`,
		org.ID, now).Scan(&repoID))
	repo, err := repos.ByID(ctx, db, repoID)
	must(err)
	var labels, miles [2]int64
	for i := range 2 {
		must(db.QueryRowContext(ctx, `INSERT INTO labels (repository_id, name, color, created_at) VALUES ($1, $2, 'ededed', $3) RETURNING id`,
			repoID, fmt.Sprintf("label-%d", i), now).Scan(&labels[i]))
		must(db.QueryRowContext(ctx, `INSERT INTO milestones (repository_id, number, title, creator_id, created_at, updated_at)
			VALUES ($1, $2, $3, NULL, $4, $4) RETURNING id`, repoID, i+1, fmt.Sprintf("v%d", i), now).Scan(&miles[i]))
	}
	want := map[int64]string{} // issue id -> author's association
	for i := range 100 {
		u, err := accounts.Create(ctx, db, accounts.NewAccount{Type: accounts.TypeUser, Login: fmt.Sprintf("user%d", i)})
		must(err)
		assoc := "NONE"
		switch i % 3 {
		case 1:
			must(accounts.SetMember(ctx, db, org.ID, u.ID, accounts.RoleMember))
			assoc = "MEMBER"
		case 2:
			_, err := db.ExecContext(ctx, `INSERT INTO repo_collaborators (repository_id, user_id, permission, created_at) VALUES ($1, $2, 'push', $3)`,
				repoID, u.ID, now)
			must(err)
			assoc = "COLLABORATOR"
		}
		var id int64
		must(db.QueryRowContext(ctx, `INSERT INTO issues (repository_id, number, title, body, user_id, milestone_id, created_at, updated_at)
			VALUES ($1, $2, 'T', '', $3, $4, $5, $5) RETURNING id`, repoID, i+1, u.ID, miles[i%2], now).Scan(&id))
		for _, lb := range labels {
			_, err := db.ExecContext(ctx, `INSERT INTO issue_labels (issue_id, label_id) VALUES ($1, $2)`, id, lb)
			must(err)
		}
		_, err = db.ExecContext(ctx, `INSERT INTO issue_assignees (issue_id, user_id) VALUES ($1, $2)`, id, u.ID)
		must(err)
		want[id] = assoc
	}
	complete := func(limit int) ([]*Issue, int) {
		list, err := collect(scanIssue)(db.QueryContext(ctx, `SELECT `+issueColumns+` FROM issues i ORDER BY i.id LIMIT $1`, limit))
		must(err)
		q := &storetest.CountingQ{Q: db}
		must(newLoader(q, repo).issues(ctx, list))
		return list, q.N
	}
	_, few := complete(10)
	list, many := complete(100)
	if many != few || many > 9 {
		t.Errorf("queries: %d for 100 issues, %d for 10; want the same few", many, few)
	}
	for _, is := range list {
		if is.User == nil || len(is.Labels) != 2 || len(is.Assignees) != 1 || is.Assignees[0].ID != is.User.ID ||
			is.Milestone == nil || is.Milestone.OpenIssues != 50 || is.Association != want[is.ID] {
			t.Fatalf("issue %d: %+v (milestone %+v), association want %s", is.Number, is, is.Milestone, want[is.ID])
		}
	}
}
