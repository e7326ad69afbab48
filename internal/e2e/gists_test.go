package e2e_test

import (
	"encoding/json"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

var ctx = apptest.Ctx()

// files makes a CreateGistRequest's files from names and contents.
func files(kv ...string) map[github.GistFilename]*github.CreateGistFile {
	out := map[github.GistFilename]*github.CreateGistFile{}
	for i := 0; i < len(kv); i += 2 {
		out[github.GistFilename(kv[i])] = &github.CreateGistFile{Content: kv[i+1]}
	}
	return out
}

// fileNames returns the gist's file names, sorted.
func fileNames(g *github.Gist) []string {
	var out []string
	for name := range g.Files {
		out = append(out, string(name))
	}
	slices.Sort(out)
	return out
}

// fileOf returns the gist's file of that name (a zero file when absent).
func fileOf(g *github.Gist, name string) *github.GistFile {
	f := g.Files[github.GistFilename(name)]
	return &f
}

// gitURL is the gist's git_pull_url with credentials in it.
func gitURL(t *testing.T, g *github.Gist, login, secret string) string {
	t.Helper()
	u, err := url.Parse(g.GetGitPullURL())
	if err != nil {
		t.Fatal(err)
	}
	if login != "" {
		u.User = url.UserPassword(login, secret)
	}
	return u.String()
}

func TestGistIsAGitRepository(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	alice, bob := env.User("alice"), env.User("bob")
	aliceToken, bobToken := env.Token(alice, "gist"), env.Token(bob, "gist")
	ac, bc := env.Client(aliceToken), env.Client(bobToken)

	var g *github.Gist
	apptest.Step(t, "alice creates a gist of two files", func(t *testing.T) {
		var err error
		g, _, err = ac.Gists.Create(ctx, github.CreateGistRequest{Description: github.Ptr("notes"), Public: github.Ptr(true),
			Files: files("hello.rb", "puts 'hi'\n", "b.txt", "bee\n")})
		apptest.Must(t, "create", err)
		if got := fileNames(g); !slices.Equal(got, []string{"b.txt", "hello.rb"}) {
			t.Fatalf("files %v", got)
		}
		f := fileOf(g, "hello.rb")
		if f.GetContent() != "puts 'hi'\n" || f.GetSize() != 10 || f.GetLanguage() != "Ruby" {
			t.Fatalf("hello.rb %+v", f)
		}
		if !strings.HasSuffix(g.GetGitPullURL(), "/gist/"+g.GetID()+".git") || g.GetOwner().GetLogin() != "alice" || !g.GetPublic() {
			t.Fatalf("gist %s pull %s owner %s", g.GetID(), g.GetGitPullURL(), g.GetOwner().GetLogin())
		}
	})

	apptest.Step(t, "raw_url serves the file's bytes to anyone", func(t *testing.T) {
		resp, body := env.Get(strings.TrimPrefix(fileOf(g, "hello.rb").GetRawURL(), env.URL), "")
		if resp.StatusCode != http.StatusOK || string(body) != "puts 'hi'\n" {
			t.Fatalf("raw %d %q", resp.StatusCode, body)
		}
	})

	first := ""
	apptest.Step(t, "PATCH edits, renames and deletes files, each PATCH one commit", func(t *testing.T) {
		commits, _, err := ac.Gists.ListCommits(ctx, g.GetID(), nil)
		apptest.Must(t, "commits", err)
		if len(commits) != 1 || commits[0].GetChangeStatus().GetAdditions() != 2 {
			t.Fatalf("commits after create: %d", len(commits))
		}
		first = commits[0].GetVersion()
		g, _, err = ac.Gists.Update(ctx, g.GetID(), github.UpdateGistRequest{Description: github.Ptr("better notes"),
			Files: map[github.GistFilename]*github.UpdateGistFile{
				"hello.rb": {Content: github.Ptr("puts 'hello'\n")},
				"b.txt":    {Filename: github.Ptr("c.md")},
			}})
		apptest.Must(t, "edit", err)
		if got := fileNames(g); !slices.Equal(got, []string{"c.md", "hello.rb"}) || fileOf(g, "c.md").GetContent() != "bee\n" || g.GetDescription() != "better notes" {
			t.Fatalf("after edit: %v %q", got, g.GetDescription())
		}
		g, _, err = ac.Gists.Update(ctx, g.GetID(), github.UpdateGistRequest{
			Files: map[github.GistFilename]*github.UpdateGistFile{"c.md": nil}})
		apptest.Must(t, "delete a file", err)
		if got := fileNames(g); !slices.Equal(got, []string{"hello.rb"}) {
			t.Fatalf("after delete: %v", got)
		}
		commits, _, err = ac.Gists.ListCommits(ctx, g.GetID(), nil)
		apptest.Must(t, "commits", err)
		if len(commits) != 3 || commits[2].GetVersion() != first || commits[0].GetUser().GetLogin() != "alice" {
			t.Fatalf("commits: %d", len(commits))
		}
		old, _, err := ac.Gists.GetRevision(ctx, g.GetID(), first)
		apptest.Must(t, "revision", err)
		if got := fileNames(old); !slices.Equal(got, []string{"b.txt", "hello.rb"}) || fileOf(old, "hello.rb").GetContent() != "puts 'hi'\n" {
			t.Fatalf("first revision: %v", got)
		}
	})

	work := t.TempDir()
	apptest.Step(t, "git clones the gist and its log has the PATCHes", func(t *testing.T) {
		apptest.Git(t, work, "clone", "-q", gitURL(t, g, "", ""), "g")
		log := apptest.Git(t, filepath.Join(work, "g"), "log", "--format=%H %an")
		lines := strings.Split(strings.TrimSpace(log), "\n")
		if len(lines) != 3 || !strings.HasPrefix(lines[2], first+" alice") {
			t.Fatalf("git log:\n%s", log)
		}
		data, err := os.ReadFile(filepath.Join(work, "g", "hello.rb"))
		if err != nil || string(data) != "puts 'hello'\n" {
			t.Fatalf("hello.rb %q %v", data, err)
		}
	})

	apptest.Step(t, "the owner pushes a commit with git and the API shows it", func(t *testing.T) {
		dir := filepath.Join(work, "g")
		sha := apptest.Commit(t, dir, "from git", map[string]string{"pushed.go": "package main\n"})
		apptest.Git(t, dir, "push", "-q", gitURL(t, g, "alice", aliceToken), "HEAD")
		got, _, err := bc.Gists.Get(ctx, g.GetID())
		apptest.Must(t, "get", err)
		if !slices.Equal(fileNames(got), []string{"hello.rb", "pushed.go"}) || fileOf(got, "pushed.go").GetContent() != "package main\n" {
			t.Fatalf("after push: %v", fileNames(got))
		}
		commits, _, err := bc.Gists.ListCommits(ctx, g.GetID(), nil)
		apptest.Must(t, "commits", err)
		if len(commits) != 4 || commits[0].GetVersion() != sha {
			t.Fatalf("commits after push: %d, newest %s want %s", len(commits), commits[0].GetVersion(), sha)
		}
	})

	apptest.Step(t, "another user neither pushes, edits nor deletes", func(t *testing.T) {
		dir := filepath.Join(work, "g")
		apptest.Commit(t, dir, "bob's", map[string]string{"bob.txt": "bob\n"})
		out, err := apptest.TryGit(t, dir, "push", gitURL(t, g, "bob", bobToken), "HEAD")
		if err == nil || !strings.Contains(out, "only its owner pushes") {
			t.Fatalf("bob's push: %v\n%s", err, out)
		}
		out, err = apptest.TryGit(t, dir, "push", gitURL(t, g, "", ""), "HEAD")
		if err == nil {
			t.Fatalf("anonymous push accepted:\n%s", out)
		}
		_, resp, err := bc.Gists.Update(ctx, g.GetID(), github.UpdateGistRequest{Description: github.Ptr("mine")})
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("bob's edit: %v", err)
		}
		resp, err = bc.Gists.Delete(ctx, g.GetID())
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("bob's delete: %v", err)
		}
	})

	apptest.Step(t, "the owner's token pushes only with the gist scope or the Gists permission", func(t *testing.T) {
		dir := filepath.Join(work, "g")
		for _, c := range []struct {
			token string
			ok    bool
		}{
			{env.Token(alice, "repo"), false},
			{env.FineGrainedToken(alice, alice, nil, "gists:read"), false},
			{env.FineGrainedToken(alice, alice, nil, "gists:write"), true},
		} {
			out, err := apptest.TryGit(t, dir, "push", gitURL(t, g, "alice", c.token), "HEAD")
			if (err == nil) != c.ok {
				t.Fatalf("push, want success %v: %v\n%s", c.ok, err, out)
			}
		}
		got, _, err := bc.Gists.Get(ctx, g.GetID())
		apptest.Must(t, "get", err)
		if _, ok := got.Files["bob.txt"]; !ok {
			t.Fatalf("the fine-grained push is not in the gist: %v", fileNames(got))
		}
	})

	apptest.Step(t, "a push may neither bring a directory nor delete the branch", func(t *testing.T) {
		dir := filepath.Join(work, "g")
		apptest.Commit(t, dir, "nested", map[string]string{"sub/x.txt": "x\n"})
		out, err := apptest.TryGit(t, dir, "push", gitURL(t, g, "alice", aliceToken), "HEAD")
		if err == nil || !strings.Contains(out, "Gist does not support directories") {
			t.Fatalf("push of a directory: %v\n%s", err, out)
		}
		out, err = apptest.TryGit(t, dir, "push", gitURL(t, g, "alice", aliceToken), ":refs/heads/main")
		if err == nil || !strings.Contains(out, "cannot be deleted") {
			t.Fatalf("push deleting the gist's branch: %v\n%s", err, out)
		}
	})

	apptest.Step(t, "bob stars, forks and comments", func(t *testing.T) {
		_, err := bc.Gists.Star(ctx, g.GetID())
		apptest.Must(t, "star", err)
		starred, _, err := bc.Gists.IsStarred(ctx, g.GetID())
		apptest.Must(t, "is starred", err)
		alsoAlice, _, err := ac.Gists.IsStarred(ctx, g.GetID())
		apptest.Must(t, "is starred (alice)", err)
		list, _, err := bc.Gists.ListStarred(ctx, nil)
		apptest.Must(t, "starred", err)
		if !starred || alsoAlice || len(list) != 1 || list[0].GetID() != g.GetID() {
			t.Fatalf("starred %v (alice %v), list %d", starred, alsoAlice, len(list))
		}
		_, err = bc.Gists.Unstar(ctx, g.GetID())
		apptest.Must(t, "unstar", err)
		if list, _, _ = bc.Gists.ListStarred(ctx, nil); len(list) != 0 {
			t.Fatalf("starred after unstar: %d", len(list))
		}

		fork, resp, err := bc.Gists.Fork(ctx, g.GetID())
		apptest.Must(t, "fork", err)
		if resp.StatusCode != http.StatusCreated || fork.GetOwner().GetLogin() != "bob" || fork.GetID() == g.GetID() {
			t.Fatalf("fork %d %+v", resp.StatusCode, fork)
		}
		forks, _, err := ac.Gists.ListForks(ctx, g.GetID(), nil)
		apptest.Must(t, "forks", err)
		if len(forks) != 1 || forks[0].GetID() != fork.GetID() {
			t.Fatalf("forks %d", len(forks))
		}
		copied, _, err := bc.Gists.ListCommits(ctx, fork.GetID(), nil)
		apptest.Must(t, "fork's commits", err)
		if len(copied) != 5 {
			t.Fatalf("fork's history: %d commits", len(copied))
		}
		if _, resp, _ := bc.Gists.Fork(ctx, g.GetID()); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("second fork: %d", apptest.ResponseStatus(resp))
		}
		if _, resp, _ := ac.Gists.Fork(ctx, g.GetID()); apptest.ResponseStatus(resp) != http.StatusUnprocessableEntity {
			t.Fatalf("own fork: %d", apptest.ResponseStatus(resp))
		}
		_, body := env.Get("/gists/"+fork.GetID(), "token "+bobToken)
		if !strings.Contains(string(body), `"fork_of":{`) {
			t.Fatalf("fork without fork_of: %s", body)
		}
		_, body = env.Get("/gists/"+g.GetID(), "token "+bobToken)
		var shown struct {
			Forks []struct {
				ID   string `json:"id"`
				User struct {
					Login string `json:"login"`
				} `json:"user"`
			} `json:"forks"`
		}
		apptest.Must(t, "decode the gist", json.Unmarshal(body, &shown))
		if len(shown.Forks) != 1 || shown.Forks[0].ID != fork.GetID() || shown.Forks[0].User.Login != "bob" {
			t.Fatalf("the gist's forks: %+v", shown.Forks)
		}

		c, _, err := bc.Gists.CreateComment(ctx, g.GetID(), github.CreateGistCommentRequest{Body: "nice"})
		apptest.Must(t, "comment", err)
		_, resp, _ = ac.Gists.UpdateComment(ctx, g.GetID(), c.GetID(), github.UpdateGistCommentRequest{Body: "mine now"})
		if apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("alice edits bob's comment: %d", apptest.ResponseStatus(resp))
		}
		c, _, err = bc.Gists.UpdateComment(ctx, g.GetID(), c.GetID(), github.UpdateGistCommentRequest{Body: "very nice"})
		apptest.Must(t, "edit comment", err)
		got, _, err := ac.Gists.GetComment(ctx, g.GetID(), c.GetID())
		apptest.Must(t, "get comment", err)
		comments, _, err := ac.Gists.ListComments(ctx, g.GetID(), nil)
		apptest.Must(t, "comments", err)
		again, _, err := ac.Gists.Get(ctx, g.GetID())
		apptest.Must(t, "get", err)
		if got.GetBody() != "very nice" || got.GetUser().GetLogin() != "bob" || len(comments) != 1 || again.GetComments() != 1 {
			t.Fatalf("comment %q by %s, %d listed, gist counts %d", got.GetBody(), got.GetUser().GetLogin(), len(comments), again.GetComments())
		}
		_, err = ac.Gists.DeleteComment(ctx, g.GetID(), c.GetID())
		apptest.Must(t, "the owner deletes a comment", err)
	})

	apptest.Step(t, "the owner deletes the gist and its repository", func(t *testing.T) {
		_, err := ac.Gists.Delete(ctx, g.GetID())
		apptest.Must(t, "delete", err)
		if me, _, err := ac.Users.Get(ctx, ""); err != nil || me.GetPublicGists() != 0 {
			t.Fatalf("alice's public gists after the delete: %d (%v)", me.GetPublicGists(), err)
		}
		if _, resp, _ := bc.Gists.Get(ctx, g.GetID()); apptest.ResponseStatus(resp) != http.StatusNotFound {
			t.Fatalf("get after delete: %d", apptest.ResponseStatus(resp))
		}
		if _, err := os.Stat(env.App.Gists.Dir(g.GetID())); !os.IsNotExist(err) {
			t.Fatalf("repository left: %v", err)
		}
		if out, err := apptest.TryGit(t, work, "ls-remote", gitURL(t, g, "", "")); err == nil {
			t.Fatalf("ls-remote of a deleted gist:\n%s", out)
		}
	})
}

func TestSecretGistsAreListedToTheirOwnerOnly(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	alice, bob := env.User("alice"), env.User("bob")
	ac, bc, anon := env.Client(env.Token(alice, "gist")), env.Client(env.Token(bob)), env.Client("")
	public, _, err := ac.Gists.Create(ctx, github.CreateGistRequest{Public: github.Ptr(true), Files: files("a.txt", "a")})
	apptest.Must(t, "create public", err)
	secret, _, err := ac.Gists.Create(ctx, github.CreateGistRequest{Files: files("s.txt", "s")})
	apptest.Must(t, "create secret", err)
	if secret.GetPublic() {
		t.Fatal("a gist without public is public")
	}
	ids := func(list []*github.Gist) []string {
		var out []string
		for _, g := range list {
			out = append(out, g.GetID())
		}
		slices.Sort(out)
		return out
	}
	both := ids([]*github.Gist{public, secret})
	for _, c := range []struct {
		what string
		list func() ([]*github.Gist, *github.Response, error)
		want []string
	}{
		{"alice's own", func() ([]*github.Gist, *github.Response, error) { return ac.Gists.List(ctx, "", nil) }, both},
		{"alice's by login, to alice", func() ([]*github.Gist, *github.Response, error) { return ac.Gists.List(ctx, "alice", nil) }, both},
		{"alice's by login, to bob", func() ([]*github.Gist, *github.Response, error) { return bc.Gists.List(ctx, "alice", nil) }, []string{public.GetID()}},
		{"alice's by login, anonymously", func() ([]*github.Gist, *github.Response, error) { return anon.Gists.List(ctx, "alice", nil) }, []string{public.GetID()}},
		{"public", func() ([]*github.Gist, *github.Response, error) { return anon.Gists.ListAll(ctx, nil) }, []string{public.GetID()}},
		{"anonymous GET /gists", func() ([]*github.Gist, *github.Response, error) { return anon.Gists.List(ctx, "", nil) }, []string{public.GetID()}},
		{"bob's own", func() ([]*github.Gist, *github.Response, error) { return bc.Gists.List(ctx, "", nil) }, nil},
		{"since tomorrow", func() ([]*github.Gist, *github.Response, error) {
			return ac.Gists.List(ctx, "", &github.GistListOptions{Since: time.Now().Add(24 * time.Hour)})
		}, nil},
	} {
		list, _, err := c.list()
		apptest.Must(t, c.what, err)
		if got := ids(list); !slices.Equal(got, c.want) {
			t.Errorf("%s: %v, want %v", c.what, got, c.want)
		}
	}
	got, _, err := anon.Gists.Get(ctx, secret.GetID())
	apptest.Must(t, "a secret gist by its id, anonymously", err)
	if fileOf(got, "s.txt").GetContent() != "s" {
		t.Fatalf("secret gist's content %q", fileOf(got, "s.txt").GetContent())
	}
	me, _, err := ac.Users.Get(ctx, "")
	apptest.Must(t, "GET /user", err)
	other, _, err := bc.Users.Get(ctx, "alice")
	apptest.Must(t, "GET /users/alice", err)
	if me.GetPublicGists() != 1 || me.GetPrivateGists() != 1 || other.GetPublicGists() != 1 {
		t.Fatalf("alice's counts: public %d private %d, as bob sees them: public %d", me.GetPublicGists(), me.GetPrivateGists(), other.GetPublicGists())
	}
	paged, resp, err := ac.Gists.List(ctx, "", &github.GistListOptions{ListOptions: github.ListOptions{PerPage: 1}})
	apptest.Must(t, "a page of one", err)
	if len(paged) != 1 || resp.NextPage != 2 {
		t.Fatalf("page of one: %d, next %d", len(paged), resp.NextPage)
	}
}

func TestGistCredentials(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	alice := env.User("alice")
	create := `{"files":{"a.txt":{"content":"a"}}}`
	for _, c := range []struct {
		what   string
		token  string
		status int
	}{
		{"a classic token without the gist scope", env.Token(alice, "repo"), http.StatusForbidden},
		{"a classic token with the gist scope", env.Token(alice, "gist"), http.StatusCreated},
		{"a fine-grained token with Gists write", env.FineGrainedToken(alice, alice, nil, "gists:write"), http.StatusCreated},
		{"a fine-grained token without Gists", env.FineGrainedToken(alice, alice, nil, "followers:write"), http.StatusForbidden},
		{"no credentials", "", http.StatusNotFound},
	} {
		resp, body := env.DoJSON("POST", "/gists", c.token, create)
		if resp.StatusCode != c.status {
			t.Errorf("%s: %d, want %d: %s", c.what, resp.StatusCode, c.status, body)
		}
	}
	org := env.Org("acme", alice)
	bot := env.InstallationToken(org, nil, "contents:read")
	if resp, body := env.DoJSON("POST", "/gists", bot, create); resp.StatusCode != http.StatusForbidden {
		t.Errorf("an installation token creates a gist: %d %s", resp.StatusCode, body)
	}
	resp, body := env.DoJSON("GET", "/gists/public", bot, "")
	apptest.WantStatus(t, "public gists to an installation token", resp, body, http.StatusOK)
	resp, body = env.DoJSON("GET", "/gists/starred", "", "")
	apptest.WantStatus(t, "starred gists, anonymously", resp, body, http.StatusUnauthorized)
	for _, c := range []struct{ what, body string }{
		{"no files", `{"files":{}}`},
		{"an empty file", `{"files":{"a.txt":{"content":""}}}`},
		{"a directory", `{"files":{"d/a.txt":{"content":"a"}}}`},
	} {
		resp, body := env.DoJSON("POST", "/gists", env.Token(alice, "gist"), c.body)
		apptest.WantStatus(t, c.what, resp, body, http.StatusUnprocessableEntity)
	}
	token := env.Token(alice, "gist")
	g, _, err := env.Client(token).Gists.Create(ctx, github.CreateGistRequest{Files: files("only.txt", "x")})
	apptest.Must(t, "create", err)
	for _, c := range []struct{ what, body string }{
		{"deleting the only file", `{"files":{"only.txt":null}}`},
		{"a file without content", `{"files":{"new.txt":{"filename":"newer.txt"}}}`},
		{"renaming into a directory", `{"files":{"only.txt":{"filename":"d/only.txt"}}}`},
		{"nothing", `{}`},
	} {
		resp, body := env.DoJSON("PATCH", "/gists/"+g.GetID(), token, c.body)
		apptest.WantStatus(t, c.what, resp, body, http.StatusUnprocessableEntity)
	}
}

func TestGraphQLGists(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	alice, bob := env.User("alice"), env.User("bob")
	aliceToken := env.Token(alice, "gist")
	ac := env.Client(aliceToken)
	public, _, err := ac.Gists.Create(ctx, github.CreateGistRequest{Public: github.Ptr(true), Description: github.Ptr("open"),
		Files: files("a.txt", "alpha")})
	apptest.Must(t, "create public", err)
	_, _, err = ac.Gists.Create(ctx, github.CreateGistRequest{Description: github.Ptr("hidden"), Files: files("s.txt", "secret")})
	apptest.Must(t, "create secret", err)
	query := func(token, q string) string {
		t.Helper()
		resp, body := env.DoJSON("POST", "/api/graphql", token, `{"query": `+strconvQuote(q)+`}`)
		if resp.StatusCode != http.StatusOK || strings.Contains(string(body), `"errors"`) {
			t.Fatalf("%s: %d %s", q, resp.StatusCode, body)
		}
		return string(body)
	}
	const list = `{ user(login: "alice") { gists(first: 10, privacy: ALL) { totalCount nodes { name description isPublic files { name text } } } } }`
	if got := query(aliceToken, list); !strings.Contains(got, `"totalCount":2`) || !strings.Contains(got, `"text":"secret"`) {
		t.Fatalf("alice's gists to alice: %s", got)
	}
	if got := query(env.Token(bob), list); !strings.Contains(got, `"totalCount":1`) || strings.Contains(got, "hidden") {
		t.Fatalf("alice's gists to bob: %s", got)
	}
	node := `{ node(id: "` + public.GetNodeID() + `") { ... on Gist { name owner { login } files(limit: 1) { name } } } }`
	if got := query(env.Token(bob), node); !strings.Contains(got, `"name":"`+public.GetID()+`"`) || !strings.Contains(got, `"login":"alice"`) {
		t.Fatalf("gist node: %s", got)
	}
}

// strconvQuote is q as a JSON string.
func strconvQuote(q string) string {
	b, _ := json.Marshal(q)
	return string(b)
}
