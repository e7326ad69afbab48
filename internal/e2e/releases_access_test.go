package e2e_test

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/app"
	"forgeapi/internal/apptest"
	"forgeapi/internal/repos"
)

// TestReleaseAccess checks who reaches a private repository's releases:
// anonymous callers and strangers get 404 (the API and the browser
// download address alike), the owner's token downloads; fine-grained
// tokens need Contents read to read and Contents write to write. A draft
// is hidden from a collaborator with read access. An upload over the
// configured limit is a 413 and leaves no asset.
func TestReleaseAccess(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t, func(c *app.Config) { c.MaxAssetSize = 1000 })
	ctx := apptest.Ctx()
	octo, reader := env.User("octo"), env.User("reader")
	repo := env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
	token := env.Token(octo, "repo")
	dir := apptest.WorkTree(t, map[string]string{"README.md": "# secret\n"})
	apptest.Git(t, dir, "push", "-q", env.GitURL("octo", "secret", "octo", token), "HEAD:refs/heads/main")
	c := env.Client(token)
	rel, _, err := c.Repositories.CreateRelease(ctx, "octo", "secret", github.CreateReleaseRequest{TagName: "v1"})
	apptest.Must(t, "release", err)
	asset, _, err := c.Repositories.UploadReleaseAssetFromRelease(ctx, rel, &github.UploadOptions{Name: "s.txt"}, strings.NewReader("secret"), 6)
	apptest.Must(t, "upload", err)
	draft, _, err := c.Repositories.CreateRelease(ctx, "octo", "secret", github.CreateReleaseRequest{TagName: "v2", Draft: github.Ptr(true)})
	apptest.Must(t, "draft", err)

	apptest.Step(t, "browser downloads", func(t *testing.T) {
		for _, tc := range []struct {
			name, auth string
			want       int
		}{
			{"anonymous", "", http.StatusNotFound},
			{"a stranger", "token " + env.Token(env.User("stranger"), "repo"), http.StatusNotFound},
			{"the owner", "token " + token, http.StatusOK},
		} {
			req, _ := http.NewRequest("GET", asset.GetBrowserDownloadURL(), nil)
			if tc.auth != "" {
				req.Header.Set("Authorization", tc.auth)
			}
			resp, err := env.HTTPClient().Do(req)
			apptest.Must(t, "download", err)
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != tc.want || tc.want == http.StatusOK && string(body) != "secret" {
				t.Errorf("%s: %d %q, want %d", tc.name, resp.StatusCode, body, tc.want)
			}
		}
		resp, _ := env.Do("GET", "/octo/secret/releases/download/v1/missing.txt", token, nil)
		if resp.StatusCode != http.StatusNotFound {
			t.Errorf("a missing asset's address: %d", resp.StatusCode)
		}
	})
	apptest.Step(t, "fine-grained tokens", func(t *testing.T) {
		for _, tc := range []struct {
			perms             string
			wantRead, wantNew int
		}{
			{"contents:read", http.StatusOK, http.StatusForbidden},
			{"contents:write", http.StatusOK, http.StatusCreated},
			{"metadata:read", http.StatusForbidden, http.StatusForbidden},
		} {
			fg := env.FineGrainedToken(octo, octo, []*repos.Repository{repo}, tc.perms)
			if resp, _ := env.Do("GET", "/repos/octo/secret/releases", fg, nil); resp.StatusCode != tc.wantRead {
				t.Errorf("%s: list %d, want %d", tc.perms, resp.StatusCode, tc.wantRead)
			}
			if resp, body := env.DoJSON("POST", "/repos/octo/secret/releases", fg, `{"tag_name":"fg-`+strings.ReplaceAll(tc.perms, ":", "-")+`"}`); resp.StatusCode != tc.wantNew {
				t.Errorf("%s: create %d %s, want %d", tc.perms, resp.StatusCode, body, tc.wantNew)
			}
		}
	})
	apptest.Step(t, "a draft is hidden from a reader", func(t *testing.T) {
		_, _, err := c.Repositories.AddCollaborator(ctx, "octo", "secret", "reader", &github.RepositoryAddCollaboratorOptions{Permission: "pull"})
		apptest.Must(t, "invite", err)
		invites, _, err := env.Client(env.Token(reader, "repo")).Users.ListInvitations(ctx, nil)
		apptest.Must(t, "invitations", err)
		for _, inv := range invites {
			_, err := env.Client(env.Token(reader, "repo")).Users.AcceptInvitation(ctx, inv.GetID())
			apptest.Must(t, "accept", err)
		}
		rc := env.Client(env.Token(reader, "repo"))
		list, _, err := rc.Repositories.ListReleases(ctx, "octo", "secret", nil)
		apptest.Must(t, "list", err)
		for _, r := range list {
			if r.GetDraft() {
				t.Errorf("the reader sees the draft %s", r.GetTagName())
			}
		}
		if _, resp, _ := rc.Repositories.GetRelease(ctx, "octo", "secret", draft.GetID()); resp == nil || resp.StatusCode != http.StatusNotFound {
			t.Errorf("the reader reads the draft")
		}
		if len(list) == 0 {
			t.Errorf("the reader sees no release")
		}
	})
	apptest.Step(t, "an upload over the limit", func(t *testing.T) {
		_, resp, err := c.Repositories.UploadReleaseAssetFromRelease(ctx, rel, &github.UploadOptions{Name: "big.bin"}, strings.NewReader(strings.Repeat("x", 1001)), 1001)
		if err == nil || resp == nil || resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("over the limit: %v", err)
		}
		// Without a length (chunked), the limit stops the stream.
		chunked := io.MultiReader(strings.NewReader(strings.Repeat("y", 600)), strings.NewReader(strings.Repeat("y", 600)))
		if resp, body := env.Do("POST", "/api/uploads/repos/octo/secret/releases/"+itoa(rel.GetID())+"/assets?name=chunked.bin", token, chunked,
			"Content-Type", "application/octet-stream"); resp.StatusCode != http.StatusRequestEntityTooLarge {
			t.Fatalf("chunked over the limit: %d %s", resp.StatusCode, body)
		}
		if n := assetFiles(t, env); n != 1 {
			t.Fatalf("%d asset files after the refused uploads, want 1", n)
		}
		list, _, err := c.Repositories.ListReleaseAssets(ctx, "octo", "secret", rel.GetID(), nil)
		apptest.Must(t, "assets", err)
		if len(list) != 1 {
			t.Fatalf("%d assets after the refused upload, want 1", len(list))
		}
	})
}
