package graphql_test

import (
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// TestReactionMutations leaves and takes back reactions through
// addReaction and removeReaction on an issue, a pull request and an issue
// comment, and checks that reactionGroups count them as REST's rollups
// do (reactions left through REST too), with viewerHasReacted per
// viewer; a reader without write access is FORBIDDEN, an unknown
// subject NOT_FOUND.
func TestReactionMutations(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	env.Repo(octo, "hello")
	token, bobToken := env.Token(octo, "repo"), env.Token(bob, "public_repo")
	ctx := apptest.Ctx()
	rest := env.Client(token)
	issue, _, err := rest.Issues.Create(ctx, "octo", "hello", github.CreateIssueRequest{Title: "Ship it"})
	apptest.Must(t, "issue", err)
	comment, _, err := rest.Issues.CreateComment(ctx, "octo", "hello", issue.GetNumber(), github.IssueCommentRequest{Body: "+1"})
	apptest.Must(t, "comment", err)
	_, _, err = env.Client(bobToken).Reactions.CreateIssueReaction(ctx, "octo", "hello", issue.GetNumber(), "heart")
	apptest.Must(t, "bob's REST reaction", err)

	const add = `mutation($id: ID!, $content: ReactionContent!) {
		addReaction(input: {subjectId: $id, content: $content, clientMutationId: "m1"}) {
			clientMutationId
			reaction { id databaseId content user { login } reactable { ... on Issue { number } ... on IssueComment { body } } }
			subject { id ... on Issue { number } }
			reactionGroups { content reactors { totalCount } viewerHasReacted }
		}
	}`
	type group struct {
		Content  string
		Reactors struct{ TotalCount int }
		Users    struct{ TotalCount int }
		Viewer   bool `json:"viewerHasReacted"`
	}
	count := func(groups []group, content string) (int, bool) {
		for _, g := range groups {
			if g.Content == content {
				return g.Reactors.TotalCount, g.Viewer
			}
		}
		t.Fatalf("no %s group in %+v", content, groups)
		return 0, false
	}
	var out struct {
		AddReaction struct {
			ClientMutationID string
			Reaction         struct {
				ID, Content string
				DatabaseID  int64
				User        struct{ Login string }
				Reactable   struct{ Number int }
			}
			Subject        struct{ Number int }
			ReactionGroups []group
		}
	}
	apptest.Step(t, "addReaction on an issue", func(t *testing.T) {
		gqlData(t, env, token, add, map[string]any{"id": issue.GetNodeID(), "content": "HEART"}, &out)
		a := out.AddReaction
		if a.ClientMutationID != "m1" || a.Reaction.Content != "HEART" || a.Reaction.User.Login != "octo" ||
			a.Reaction.Reactable.Number != issue.GetNumber() || a.Subject.Number != issue.GetNumber() || len(a.ReactionGroups) != 8 {
			t.Fatalf("addReaction %+v", a)
		}
		if n, viewer := count(a.ReactionGroups, "HEART"); n != 2 || !viewer {
			t.Fatalf("HEART group: %d, viewer %v", n, viewer)
		}
		got, _, err := rest.Issues.Get(ctx, "octo", "hello", issue.GetNumber())
		apptest.Must(t, "REST issue", err)
		if got.GetReactions().GetHeart() != 2 {
			t.Fatalf("REST rollup %+v", got.GetReactions())
		}
		var node struct{ Node struct{ Content string } }
		gqlData(t, env, token, `query($id: ID!) { node(id: $id) { ... on Reaction { content } } }`,
			map[string]any{"id": a.Reaction.ID}, &node)
		if node.Node.Content != "HEART" {
			t.Fatalf("node(id:) of the reaction: %+v", node)
		}
	})
	apptest.Step(t, "reactionGroups of an issue comment, per viewer", func(t *testing.T) {
		gqlData(t, env, token, add, map[string]any{"id": comment.GetNodeID(), "content": "ROCKET"}, &out)
		const q = `query { repository(owner: "octo", name: "hello") { issue(number: 1) {
			reactionGroups { content users { totalCount } reactors { totalCount } viewerHasReacted }
			comments(first: 10) { nodes { reactionGroups { content reactors { totalCount } viewerHasReacted } } } } } }`
		var read struct {
			Repository struct {
				Issue struct {
					ReactionGroups []group
					Comments       struct {
						Nodes []struct{ ReactionGroups []group }
					}
				}
			}
		}
		gqlData(t, env, bobToken, q, nil, &read)
		is := read.Repository.Issue
		if n, viewer := count(is.ReactionGroups, "HEART"); n != 2 || !viewer {
			t.Fatalf("bob sees HEART %d, viewer %v", n, viewer)
		}
		if n, viewer := count(is.Comments.Nodes[0].ReactionGroups, "ROCKET"); n != 1 || viewer {
			t.Fatalf("bob sees ROCKET %d, viewer %v (octo's)", n, viewer)
		}
	})
	apptest.Step(t, "removeReaction", func(t *testing.T) {
		var removed struct {
			RemoveReaction struct {
				Reaction       *struct{ Content string }
				ReactionGroups []group
			}
		}
		const remove = `mutation($id: ID!) { removeReaction(input: {subjectId: $id, content: HEART}) {
			reaction { content } reactionGroups { content reactors { totalCount } viewerHasReacted } } }`
		gqlData(t, env, token, remove, map[string]any{"id": issue.GetNodeID()}, &removed)
		if removed.RemoveReaction.Reaction == nil || removed.RemoveReaction.Reaction.Content != "HEART" {
			t.Fatalf("removed %+v", removed)
		}
		if n, viewer := count(removed.RemoveReaction.ReactionGroups, "HEART"); n != 1 || viewer {
			t.Fatalf("after removal: %d, viewer %v", n, viewer)
		}
		gqlData(t, env, token, remove, map[string]any{"id": issue.GetNodeID()}, &removed)
		if removed.RemoveReaction.Reaction != nil {
			t.Fatalf("removed twice: %+v", removed)
		}
	})
	apptest.Step(t, "refusals", func(t *testing.T) {
		r := post(t, env, env.Token(bob, "read:user"), add, map[string]any{"id": issue.GetNodeID(), "content": "EYES"})
		if len(r.Errors) != 1 || r.Errors[0].Type != "FORBIDDEN" {
			t.Fatalf("a token without public_repo: %+v", r.Errors)
		}
		r = post(t, env, token, add, map[string]any{"id": "I_nothing", "content": "EYES"})
		if len(r.Errors) != 1 || r.Errors[0].Type != "NOT_FOUND" {
			t.Fatalf("an unknown subject: %+v", r.Errors)
		}
	})
}
