package e2e_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// thread is the part of a thread object the test reads.
type thread struct {
	ID      string
	Reason  string
	Unread  bool
	Subject struct {
		Title, URL, Type string
		LatestCommentURL string `json:"latest_comment_url"`
	}
	Repository struct {
		FullName string `json:"full_name"`
	}
}

// TestNotifications follows threads made by real activity, read through
// go-github and raw requests: a watcher is told of a new issue
// (subscribed), a mentioned user (mention), the author of a comment on
// their issue (author), a requested reviewer (review_requested); the
// actor never. Threads are marked read one by one and all at once, done,
// ignored; lists filter by all, participating and repository, carry
// X-Poll-Interval and Last-Modified (If-Modified-Since answers 304); a
// collaborator removed from a private repository sees none of its
// threads; a fine-grained token is refused.
func TestNotifications(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, alice, bob, carol := env.User("octo"), env.User("alice"), env.User("bob"), env.User("carol")
	env.Repo(octo, "hello")
	env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	octoToken := env.Token(octo, "repo")
	octoC := env.Client(octoToken)
	aliceToken, bobToken, carolToken := env.Token(alice, "repo"), env.Token(bob, "notifications", "public_repo"), env.Token(carol, "repo")
	aliceC, bobC, carolC := env.Client(aliceToken), env.Client(bobToken), env.Client(carolToken)
	list := func(t *testing.T, token, query string) ([]thread, *http.Response) {
		t.Helper()
		resp, body := env.Do("GET", "/notifications"+query, token, nil)
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET /notifications%s: %d %s", query, resp.StatusCode, body)
		}
		var out []thread
		if err := json.Unmarshal(body, &out); err != nil {
			t.Fatal(err)
		}
		return out, resp
	}

	_, _, err := bobC.Activity.SetRepositorySubscription(ctx, "octo", "hello", &github.Subscription{Subscribed: github.Ptr(true)})
	apptest.Must(t, "bob watches", err)
	issue, _, err := aliceC.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Crash on start", Body: github.Ptr("cc @carol")})
	apptest.Must(t, "alice opens an issue", err)

	apptest.Step(t, "a watcher and a mentioned user, not the actor", func(t *testing.T) {
		bobs, resp := list(t, bobToken, "")
		if len(bobs) != 1 || bobs[0].Reason != "subscribed" || !bobs[0].Unread || bobs[0].Subject.Title != "Crash on start" ||
			bobs[0].Subject.Type != "Issue" || bobs[0].Repository.FullName != "octo/hello" ||
			!strings.HasSuffix(bobs[0].Subject.URL, "/repos/octo/hello/issues/1") {
			t.Fatalf("bob's threads %+v", bobs)
		}
		if resp.Header.Get("X-Poll-Interval") != "60" || resp.Header.Get("Last-Modified") == "" {
			t.Fatalf("headers %v", resp.Header)
		}
		again, _ := env.Do("GET", "/notifications", bobToken, nil, "If-Modified-Since", resp.Header.Get("Last-Modified"))
		if again.StatusCode != http.StatusNotModified {
			t.Fatalf("If-Modified-Since: %d, want 304", again.StatusCode)
		}
		carols, _ := list(t, carolToken, "")
		if len(carols) != 1 || carols[0].Reason != "mention" {
			t.Fatalf("carol's threads %+v", carols)
		}
		if alices, _ := list(t, aliceToken, "?all=true"); len(alices) != 0 {
			t.Fatalf("the actor is told of her own issue: %+v", alices)
		}
	})
	apptest.Step(t, "a comment tells the author, and bumps the others", func(t *testing.T) {
		c, _, err := octoC.Issues.CreateComment(ctx, "octo", "hello", issue.GetNumber(), github.IssueCommentRequest{Body: "Looking"})
		apptest.Must(t, "octo comments", err)
		alices, _ := list(t, aliceToken, "")
		if len(alices) != 1 || alices[0].Reason != "author" || alices[0].Subject.LatestCommentURL != c.GetURL() {
			t.Fatalf("alice's threads %+v", alices)
		}
		got, _, err := aliceC.Activity.ListNotifications(ctx, nil)
		apptest.Must(t, "go-github lists", err)
		if len(got) != 1 || got[0].GetReason() != "author" || got[0].GetSubject().GetTitle() != "Crash on start" {
			t.Fatalf("go-github's view %+v", got)
		}
		carols, _ := list(t, carolToken, "?participating=true")
		if len(carols) != 1 || carols[0].Reason != "mention" {
			t.Fatalf("carol participating %+v", carols)
		}
		if bobs, _ := list(t, bobToken, "?participating=true"); len(bobs) != 0 {
			t.Fatalf("bob only watches, yet participates: %+v", bobs)
		}
	})
	apptest.Step(t, "read, done, ignored", func(t *testing.T) {
		bobs, _ := list(t, bobToken, "")
		resp, err := bobC.Activity.MarkThreadRead(ctx, bobs[0].ID)
		apptest.Must(t, "mark read", err)
		if resp.StatusCode != http.StatusResetContent {
			t.Fatalf("mark read: %d", resp.StatusCode)
		}
		if unread, _ := list(t, bobToken, ""); len(unread) != 0 {
			t.Fatalf("unread after reading %+v", unread)
		}
		if all, _ := list(t, bobToken, "?all=true"); len(all) != 1 || all[0].Unread {
			t.Fatalf("all after reading %+v", all)
		}
		resp, err = carolC.Activity.MarkNotificationsRead(ctx, github.Timestamp{Time: time.Now()})
		apptest.Must(t, "carol marks all read", err)
		if resp.StatusCode != http.StatusResetContent {
			t.Fatalf("mark all read: %d", resp.StatusCode)
		}
		if carols, _ := list(t, carolToken, ""); len(carols) != 0 {
			t.Fatalf("carol's unread after marking all %+v", carols)
		}
		sub, _, err := bobC.Activity.SetThreadSubscription(ctx, bobs[0].ID, &github.Subscription{Ignored: github.Ptr(true)})
		apptest.Must(t, "ignore", err)
		if !sub.GetIgnored() || sub.GetSubscribed() {
			t.Fatalf("subscription %+v", sub)
		}
		_, _, err = aliceC.Issues.CreateComment(ctx, "octo", "hello", issue.GetNumber(), github.IssueCommentRequest{Body: "Thanks"})
		apptest.Must(t, "alice comments", err)
		if unread, _ := list(t, bobToken, ""); len(unread) != 0 {
			t.Fatalf("an ignored thread came back: %+v", unread)
		}
		octos, _ := list(t, octoToken, "")
		if len(octos) != 1 || octos[0].Reason != "comment" {
			t.Fatalf("octo, a commenter, is told: %+v", octos)
		}
		resp, err = octoC.Activity.MarkThreadDone(ctx, octos[0].ID)
		apptest.Must(t, "done", err)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("done: %d", resp.StatusCode)
		}
		if all, _ := list(t, octoToken, "?all=true"); len(all) != 0 {
			t.Fatalf("a done thread is listed: %+v", all)
		}
	})
	apptest.Step(t, "a requested reviewer", func(t *testing.T) {
		work := apptest.WorkTree(t, map[string]string{"README.md": "# hello\n"})
		apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", octoToken), "HEAD:refs/heads/main")
		apptest.Commit(t, work, "Fix", map[string]string{"fix.txt": "fixed\n"})
		apptest.Git(t, work, "push", "-q", env.GitURL("octo", "hello", "octo", octoToken), "HEAD:refs/heads/fix")
		inv, _, err := octoC.Repositories.AddCollaborator(ctx, "octo", "hello", "bob", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
		apptest.Must(t, "invite bob", err)
		_, err = env.Client(env.Token(bob, "repo")).Users.AcceptInvitation(ctx, inv.GetID())
		apptest.Must(t, "bob accepts", err)
		pr, _, err := octoC.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("Fix the crash"), Head: "fix", Base: "main"})
		apptest.Must(t, "pull request", err)
		_, _, err = octoC.PullRequests.RequestReviewers(ctx, "octo", "hello", pr.GetNumber(), github.ReviewersRequest{Reviewers: []string{"bob"}})
		apptest.Must(t, "request bob's review", err)
		bobs, _ := list(t, bobToken, "?participating=true")
		if len(bobs) != 1 || bobs[0].Reason != "review_requested" || bobs[0].Subject.Type != "PullRequest" ||
			!strings.HasSuffix(bobs[0].Subject.URL, "/pulls/2") {
			t.Fatalf("bob's review request %+v", bobs)
		}
	})
	apptest.Step(t, "a collaborator removed from a private repository", func(t *testing.T) {
		inv, _, err := octoC.Repositories.AddCollaborator(ctx, "octo", "secret", "carol", &github.RepositoryAddCollaboratorOptions{Permission: "pull"})
		apptest.Must(t, "invite carol", err)
		_, err = carolC.Users.AcceptInvitation(ctx, inv.GetID())
		apptest.Must(t, "carol accepts", err)
		_, _, err = octoC.Issues.Create(ctx, "octo", "secret", github.CreateIssueRequest{Title: "Leak", Body: github.Ptr("@carol @alice look")})
		apptest.Must(t, "octo mentions carol and alice in secret", err)
		// Carol's hello thread is unread again too (alice's comment).
		carols, _ := list(t, carolToken, "")
		if len(carols) != 2 || carols[0].Repository.FullName != "octo/secret" || carols[0].Reason != "mention" {
			t.Fatalf("carol's threads, the secret one first %+v", carols)
		}
		for _, th := range func() []thread { a, _ := list(t, aliceToken, "?all=true"); return a }() {
			if th.Repository.FullName == "octo/secret" {
				t.Fatalf("alice, who cannot read secret, got a thread from it: %+v", th)
			}
		}
		resp, body := env.Do("GET", "/repos/octo/secret/notifications", carolToken, nil)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"Leak"`) {
			t.Fatalf("secret's notifications for carol: %d %s", resp.StatusCode, body)
		}
		_, err = octoC.Repositories.RemoveCollaborator(ctx, "octo", "secret", "carol")
		apptest.Must(t, "remove carol", err)
		if after, _ := list(t, carolToken, "?all=true"); len(after) != 1 || after[0].Repository.FullName != "octo/hello" {
			t.Fatalf("carol after removal %+v", after)
		}
		resp, _ = env.Do("GET", "/notifications/threads/"+carols[0].ID, carolToken, nil)
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("carol reads a thread of secret: %d", resp.StatusCode)
		}
	})
	apptest.Step(t, "refusals", func(t *testing.T) {
		fine := env.FineGrainedToken(bob, bob, nil, "metadata:read")
		resp, body := env.Do("GET", "/notifications", fine, nil)
		if resp.StatusCode != http.StatusForbidden {
			t.Fatalf("a fine-grained token: %d %s", resp.StatusCode, body)
		}
		resp, _ = env.Do("GET", "/notifications", "", nil)
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("anonymous: %d", resp.StatusCode)
		}
		resp, _ = env.Do("GET", "/notifications?all=maybe", bobToken, nil)
		if resp.StatusCode != http.StatusUnprocessableEntity {
			t.Fatalf("all=maybe: %d", resp.StatusCode)
		}
		resp, _ = env.Do("GET", "/notifications/threads/999999", bobToken, nil)
		if resp.StatusCode != http.StatusNotFound {
			t.Fatalf("an unknown thread: %d", resp.StatusCode)
		}
	})
}
