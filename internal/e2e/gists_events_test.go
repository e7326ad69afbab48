package e2e_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// gistEvent is a GistEvent's payload.
type gistEvent struct {
	Action string `json:"action"`
	Gist   struct {
		ID          string                     `json:"id"`
		Description string                     `json:"description"`
		Public      bool                       `json:"public"`
		HTMLURL     string                     `json:"html_url"`
		Files       map[string]json.RawMessage `json:"files"`
	} `json:"gist"`
}

// TestGistEventsInFeeds creates and edits a public gist through the API
// and finds the platform's GistEvents (action create, then update, the
// gist as lists show it, no repository) in the owner's public feed, the
// public feed and the feed of a follower; a secret gist makes no event.
func TestGistEventsInFeeds(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	octo, bob := env.User("octo"), env.User("bob")
	c := env.Client(env.Token(octo, "gist"))
	bc := env.Client(env.Token(bob, "user"))
	_, err := bc.Users.Follow(ctx, "octo")
	apptest.Must(t, "bob follows octo", err)
	g, _, err := c.Gists.Create(ctx, github.CreateGistRequest{Description: github.Ptr("hello"), Public: github.Ptr(true),
		Files: files("hello.txt", "hello\n")})
	apptest.Must(t, "create a public gist", err)
	_, _, err = c.Gists.Create(ctx, github.CreateGistRequest{Description: github.Ptr("secret"), Public: github.Ptr(false),
		Files: files("secret.txt", "secret\n")})
	apptest.Must(t, "create a secret gist", err)
	_, _, err = c.Gists.Update(ctx, g.GetID(), github.UpdateGistRequest{Description: github.Ptr("hello, again"),
		Files: map[github.GistFilename]*github.UpdateGistFile{"hello.txt": {Content: github.Ptr("hello again\n")}}})
	apptest.Must(t, "edit the gist", err)

	check := func(t *testing.T, feed string, list []*github.Event) {
		t.Helper()
		var got []gistEvent
		for _, e := range list {
			if e.GetType() != "GistEvent" {
				continue
			}
			if e.GetActor().GetLogin() != "octo" || !e.GetPublic() || e.GetRepo().GetName() != "/" {
				t.Errorf("%s: a GistEvent by %s, public %v, repository %q", feed, e.GetActor().GetLogin(), e.GetPublic(), e.GetRepo().GetName())
			}
			var p gistEvent
			apptest.Must(t, "decode the payload", json.Unmarshal(e.GetRawPayload(), &p))
			got = append(got, p)
		}
		if len(got) != 2 || got[0].Action != "update" || got[1].Action != "create" {
			t.Fatalf("%s: GistEvents %+v, want update then create", feed, got)
		}
		for _, p := range got {
			if p.Gist.ID != g.GetID() || !p.Gist.Public || p.Gist.HTMLURL != g.GetHTMLURL() || p.Gist.Files["hello.txt"] == nil {
				t.Errorf("%s: %s payload's gist %+v", feed, p.Action, p.Gist)
			}
		}
		if got[0].Gist.Description != "hello, again" || got[1].Gist.Description != "hello" {
			t.Errorf("%s: descriptions %q, %q", feed, got[0].Gist.Description, got[1].Gist.Description)
		}
	}
	apptest.Step(t, "the owner's public feed", func(t *testing.T) {
		list, _, err := env.Client("").Activity.ListEventsPerformedByUser(ctx, "octo", true, nil)
		apptest.Must(t, "list", err)
		check(t, "/users/octo/events/public", list)
	})
	apptest.Step(t, "the public feed", func(t *testing.T) {
		list, _, err := env.Client("").Activity.ListEvents(ctx, nil)
		apptest.Must(t, "list", err)
		check(t, "/events", list)
	})
	apptest.Step(t, "a follower's received events", func(t *testing.T) {
		list, _, err := bc.Activity.ListEventsReceivedByUser(ctx, "bob", false, nil)
		apptest.Must(t, "list", err)
		check(t, "/users/bob/received_events", list)
	})
}
