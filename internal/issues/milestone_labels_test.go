package issues_test

import (
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestListLabelsForMilestone lists the labels of a milestone's issues
// through go-github: each label once, by name, only those of the
// milestone's issues, paged.
func TestListLabelsForMilestone(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "hello")
	c := env.Client(env.Token(octo, "repo"))
	m, _, err := c.Issues.CreateMilestone(ctx, "octo", "hello", github.CreateMilestoneRequest{Title: "v1"})
	apptest.Must(t, "milestone", err)
	for _, in := range []github.CreateIssueRequest{
		{Title: "a", Milestone: m.Number, Labels: []string{"bug", "enhancement"}},
		{Title: "b", Milestone: m.Number, Labels: []string{"bug"}},
		{Title: "c", Labels: []string{"question"}},
	} {
		_, _, err := c.Issues.Create(ctx, "octo", "hello", in)
		apptest.Must(t, "issue", err)
	}
	names := func(list []*github.Label) string {
		var out []string
		for _, l := range list {
			out = append(out, l.GetName())
		}
		return strings.Join(out, " ")
	}
	list, _, err := c.Issues.ListLabelsForMilestone(ctx, "octo", "hello", m.GetNumber(), nil)
	apptest.Must(t, "labels", err)
	if got := names(list); got != "bug enhancement" {
		t.Fatalf("labels %q", got)
	}
	list, resp, err := c.Issues.ListLabelsForMilestone(ctx, "octo", "hello", m.GetNumber(), &github.ListOptions{PerPage: 1})
	apptest.Must(t, "page", err)
	if names(list) != "bug" || resp.NextPage != 2 {
		t.Fatalf("page 1: %q (next %d)", names(list), resp.NextPage)
	}
}
