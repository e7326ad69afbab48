package pulls_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/webhooks"
)

// TestReviewBot plays a review bot end to end with go-github, git and a
// receiver that verifies every delivery's signature and schema: a pushed
// branch becomes a pull request, the bot gets pull_request opened and
// posts a review with a line comment and a standalone comment, a second
// push brings synchronize, reviewers are requested, a pending review is
// submitted, an approval is dismissed, comments are replied to, edited
// and deleted, and the merge through the API moves the base (seen by git
// fetch) and sends pull_request closed with merged true.
func TestReviewBot(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, apptest.WithWebhooks(webhooks.Config{AllowedHosts: "loopback"}))
	ctx := apptest.Ctx()
	octo, bob, reviewbot := env.User("octo"), env.User("bob"), env.User("reviewbot")
	acme := env.Org("acme", octo, bob)
	env.Repo(acme, "hello")
	token := env.Token(octo, "repo", "admin:repo_hook")
	owner := env.Client(token)
	bot := env.Client(env.Token(reviewbot, "public_repo"))
	member := env.Client(env.Token(bob, "repo"))
	rc := apptest.NewReceiver(t, "s")
	_, _, err := owner.Repositories.CreateHook(ctx, "acme", "hello", &github.Hook{
		Events: []string{"pull_request", "pull_request_review", "pull_request_review_comment", "push"},
		Config: &github.HookConfig{URL: github.Ptr(rc.URL), ContentType: github.Ptr("json"), Secret: github.Ptr("s")}})
	apptest.Must(t, "hook", err)

	proj := newProject(t, env, "acme", "hello", "octo", token)
	first := proj.commitOn("topic", "Topic", map[string]string{"app.txt": "one\n2\nthree\nfour\n"})
	_, _, err = owner.PullRequests.Create(ctx, "acme", "hello", github.CreatePullRequest{Title: github.Ptr("Topic"), Head: "topic", Base: "main"})
	apptest.Must(t, "open", err)

	var number int
	var head string
	apptest.Step(t, "the bot receives pull_request opened at the pushed head", func(t *testing.T) {
		opened := waitFor(t, rc, "pull_request opened")[0]
		number = opened.GetNumber()
		head = opened.GetPullRequest().GetHead().GetSHA()
		if head != first {
			t.Fatalf("opened head %s, want %s", head, first)
		}
	})

	var lone *github.PullRequestComment
	apptest.Step(t, "the bot posts a review with a line comment and a standalone comment", func(t *testing.T) {
		review, _, err := bot.PullRequests.CreateReview(ctx, "acme", "hello", number, &github.PullRequestReviewRequest{
			CommitID: github.Ptr(head), Body: github.Ptr("Two remarks."), Event: github.Ptr("COMMENT"),
			Comments: []*github.DraftReviewComment{{Path: github.Ptr("app.txt"), Line: github.Ptr(2), Side: github.Ptr("RIGHT"), Body: github.Ptr("Spell it out.")}}})
		apptest.Must(t, "bot reviews", err)
		if review.GetState() != "COMMENTED" || review.GetUser().GetLogin() != "reviewbot" || review.GetCommitID() != head {
			t.Fatalf("review: %+v", review)
		}
		var resp *github.Response
		lone, resp, err = bot.PullRequests.CreateComment(ctx, "acme", "hello", number, github.CreatePullRequestCommentRequest{
			Body: "And a newline at the end?", CommitID: head, Path: "app.txt", Line: github.Ptr(4)})
		apptest.Must(t, "bot comments", err)
		status(t, "bot comments", resp, http.StatusCreated)
		if lone.GetLine() != 4 || lone.GetSide() != "RIGHT" || !strings.HasPrefix(lone.GetDiffHunk(), "@@") || !strings.HasSuffix(lone.GetDiffHunk(), "+four") {
			t.Fatalf("standalone comment: line %d side %q hunk %q", lone.GetLine(), lone.GetSide(), lone.GetDiffHunk())
		}
		_, resp, _ = bot.PullRequests.CreateComment(ctx, "acme", "hello", number, github.CreatePullRequestCommentRequest{
			Body: "Nowhere", CommitID: head, Path: "app.txt", Line: github.Ptr(40)})
		status(t, "a line outside the diff", resp, http.StatusUnprocessableEntity)
		waitFor(t, rc, "pull_request_review submitted", "pull_request_review submitted", "pull_request_review_comment created",
			"pull_request_review_comment created")
	})

	var second string
	apptest.Step(t, "a second push synchronizes the pull request", func(t *testing.T) {
		second = proj.in(t).commitOn("topic", "Address the remarks", map[string]string{"app.txt": "one\ntwo\nthree\nfour\n"})
		waitFor(t, rc, "pull_request synchronize")
	})

	apptest.Step(t, "the owner requests a collaborator's review", func(t *testing.T) {
		_, resp, _ := owner.PullRequests.RequestReviewers(ctx, "acme", "hello", number, github.ReviewersRequest{Reviewers: []string{"reviewbot"}})
		status(t, "a reviewer who is no collaborator", resp, http.StatusUnprocessableEntity)
		pr, resp, err := owner.PullRequests.RequestReviewers(ctx, "acme", "hello", number, github.ReviewersRequest{Reviewers: []string{"bob"}})
		apptest.Must(t, "request bob", err)
		status(t, "request bob", resp, http.StatusCreated)
		if len(pr.RequestedReviewers) != 1 || pr.RequestedReviewers[0].GetLogin() != "bob" {
			t.Fatalf("requested: %+v", pr.RequestedReviewers)
		}
		reviewers, _, err := owner.PullRequests.ListReviewers(ctx, "acme", "hello", number)
		apptest.Must(t, "list reviewers", err)
		if len(reviewers.Users) != 1 {
			t.Fatalf("reviewers: %+v", reviewers)
		}
	})

	var approved *github.PullRequestReview
	apptest.Step(t, "the reviewer's pending review, hidden from others, is submitted as an approval", func(t *testing.T) {
		pending, _, err := member.PullRequests.CreateReview(ctx, "acme", "hello", number, &github.PullRequestReviewRequest{Body: github.Ptr("Looks right")})
		apptest.Must(t, "pending review", err)
		if pending.GetState() != "PENDING" {
			t.Fatalf("pending: %q", pending.GetState())
		}
		if list, _, _ := bot.PullRequests.ListReviews(ctx, "acme", "hello", number, nil); len(list) != 2 { // the review and the comment's
			t.Fatalf("another's pending review is listed: %d", len(list))
		}
		approved, _, err = member.PullRequests.SubmitReview(ctx, "acme", "hello", number, pending.GetID(), github.PullRequestSubmitReviewRequest{Event: "APPROVE"})
		apptest.Must(t, "approve", err)
		if approved.GetState() != "APPROVED" || approved.GetCommitID() != second {
			t.Fatalf("approved: %q at %s", approved.GetState(), approved.GetCommitID())
		}
		if pr, _, _ := owner.PullRequests.Get(ctx, "acme", "hello", number); len(pr.RequestedReviewers) != 0 {
			t.Fatal("a reviewer who reviewed is still requested")
		}
	})

	apptest.Step(t, "the approval is edited and the owner dismisses it", func(t *testing.T) {
		_, _, err := member.PullRequests.UpdateReview(ctx, "acme", "hello", number, approved.GetID(), "Looks right to me")
		apptest.Must(t, "edit review", err)
		_, resp, _ := owner.PullRequests.CreateReview(ctx, "acme", "hello", number, &github.PullRequestReviewRequest{Event: github.Ptr("APPROVE")})
		status(t, "approve one's own", resp, http.StatusUnprocessableEntity)
		_, resp, _ = bot.PullRequests.DismissReview(ctx, "acme", "hello", number, approved.GetID(), github.PullRequestDismissReviewRequest{Message: "no"})
		status(t, "a reader dismisses", resp, http.StatusForbidden)
		dismissed, _, err := owner.PullRequests.DismissReview(ctx, "acme", "hello", number, approved.GetID(), github.PullRequestDismissReviewRequest{Message: "Stale"})
		apptest.Must(t, "dismiss", err)
		if dismissed.GetState() != "DISMISSED" {
			t.Fatalf("dismissed: %q", dismissed.GetState())
		}
		waitFor(t, rc, "pull_request review_requested", "pull_request_review edited", "pull_request_review dismissed")
	})

	apptest.Step(t, "comments are replied to, listed, edited and deleted", func(t *testing.T) {
		reply, _, err := owner.PullRequests.CreateCommentInReplyTo(ctx, "acme", "hello", number, "Done.", lone.GetID())
		apptest.Must(t, "reply", err)
		if reply.GetInReplyTo() != lone.GetID() || reply.GetPath() != "app.txt" || reply.GetLine() != 4 {
			t.Fatalf("reply: %+v", reply)
		}
		comments, _, err := owner.PullRequests.ListComments(ctx, "acme", "hello", number, nil)
		apptest.Must(t, "list comments", err)
		if len(comments) != 3 {
			t.Fatalf("comments: %d", len(comments))
		}
		all, _, err := owner.PullRequests.ListComments(ctx, "acme", "hello", 0, nil)
		apptest.Must(t, "repository comments", err)
		if len(all) != 3 {
			t.Fatalf("repository comments: %d", len(all))
		}
		_, resp, _ := member.PullRequests.UpdateComment(ctx, "acme", "hello", lone.GetID(), github.UpdatePullRequestCommentRequest{Body: "mine now"})
		status(t, "a member edits another's comment", resp, http.StatusForbidden)
		edited, _, err := bot.PullRequests.UpdateComment(ctx, "acme", "hello", lone.GetID(), github.UpdatePullRequestCommentRequest{Body: "Newline, please."})
		apptest.Must(t, "edit comment", err)
		if edited.GetBody() != "Newline, please." {
			t.Fatalf("edited: %q", edited.GetBody())
		}
		got, _, err := owner.PullRequests.GetComment(ctx, "acme", "hello", lone.GetID())
		apptest.Must(t, "get comment", err)
		if got.GetBody() != "Newline, please." || got.GetPullRequestReviewID() == 0 {
			t.Fatalf("comment: %+v", got)
		}
		_, err = owner.PullRequests.DeleteComment(ctx, "acme", "hello", reply.GetID())
		apptest.Must(t, "delete comment", err)
		_, resp, _ = owner.PullRequests.GetComment(ctx, "acme", "hello", reply.GetID())
		status(t, "a deleted comment", resp, http.StatusNotFound)
		waitFor(t, rc, "pull_request_review_comment edited", "pull_request_review_comment deleted")
	})

	apptest.Step(t, "the merge moves main and is delivered as closed and merged", func(t *testing.T) {
		res, _, err := owner.PullRequests.Merge(ctx, "acme", "hello", number, "", &github.PullRequestOptions{SHA: second, MergeMethod: "merge"})
		apptest.Must(t, "merge", err)
		if got := proj.in(t).remoteRef("refs/heads/main"); got != res.GetSHA() {
			t.Fatalf("main = %s, want %s", got, res.GetSHA())
		}
		for _, e := range waitFor(t, rc, "pull_request closed", "push refs/heads/main") {
			if e.GetAction() == "closed" && (!e.GetPullRequest().GetMerged() || e.GetPullRequest().GetMergedBy().GetLogin() != "octo") {
				t.Fatalf("closed: %+v", e.GetPullRequest())
			}
		}
	})
}
