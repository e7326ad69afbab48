package pulls_test

import (
	"net/http"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestDeletePendingReview deletes a pending review with its comment
// through go-github: another user cannot (404, the review hidden from
// them), a submitted review cannot be deleted (422), and the deleted
// review is gone from the list.
func TestDeletePendingReview(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo, dev := env.User("octo"), env.User("dev")
	env.Repo(octo, "hello")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	p := newProject(t, env, "octo", "hello", "octo", token)
	p.commitOn("topic", "change", map[string]string{"app.txt": "one\ntwo\nthree\nfour\n"})
	pr, _, err := c.PullRequests.Create(ctx, "octo", "hello", github.CreatePullRequest{Title: github.Ptr("t"), Head: "topic", Base: "main"})
	apptest.Must(t, "open", err)
	n := pr.GetNumber()
	_, _, err = c.Repositories.AddCollaborator(ctx, "octo", "hello", "dev", &github.RepositoryAddCollaboratorOptions{Permission: "push"})
	apptest.Must(t, "invite dev", err)
	devGH := env.Client(env.Token(dev, "repo"))

	pending, _, err := c.PullRequests.CreateReview(ctx, "octo", "hello", n, &github.PullRequestReviewRequest{Body: github.Ptr("draft"),
		Comments: []*github.DraftReviewComment{{Path: github.Ptr("app.txt"), Line: github.Ptr(4), Side: github.Ptr("RIGHT"), Body: github.Ptr("hm")}}})
	apptest.Must(t, "pending review", err)
	if pending.GetState() != "PENDING" {
		t.Fatalf("state %s", pending.GetState())
	}
	if _, resp, err := devGH.PullRequests.DeletePendingReview(ctx, "octo", "hello", n, pending.GetID()); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("another user deletes it: %v", err)
	}
	got, resp, err := c.PullRequests.DeletePendingReview(ctx, "octo", "hello", n, pending.GetID())
	apptest.Must(t, "delete", err)
	if resp.StatusCode != http.StatusOK || got.GetID() != pending.GetID() || got.GetBody() != "draft" {
		t.Fatalf("deleted %+v (%d)", got, resp.StatusCode)
	}
	if _, resp, err := c.PullRequests.GetReview(ctx, "octo", "hello", n, pending.GetID()); apptest.ResponseStatus(resp) != http.StatusNotFound {
		t.Fatalf("the deleted review: %v", err)
	}
	submitted, _, err := devGH.PullRequests.CreateReview(ctx, "octo", "hello", n, &github.PullRequestReviewRequest{
		Body: github.Ptr("ok"), Event: github.Ptr("COMMENT")})
	apptest.Must(t, "submitted review", err)
	if _, resp, err := devGH.PullRequests.DeletePendingReview(ctx, "octo", "hello", n, submitted.GetID()); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
		t.Fatalf("deleting a submitted review: %v", err)
	}
	list, _, err := c.PullRequests.ListReviews(ctx, "octo", "hello", n, nil)
	apptest.Must(t, "list", err)
	if len(list) != 1 || list[0].GetID() != submitted.GetID() {
		t.Fatalf("reviews %+v", list)
	}
}
