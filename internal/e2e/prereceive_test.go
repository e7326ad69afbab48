package e2e_test

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// noSecrets refuses any push that brings a file under secrets/, naming
// the pusher and the repository from the platform's variables; it reads
// the pushed commits through GIT_DIR (and git's quarantine).
const noSecrets = `#!/bin/sh
zero=0000000000000000000000000000000000000000
while read old new ref; do
  [ "$new" = "$zero" ] && continue
  if [ "$old" = "$zero" ]; then range="$new"; else range="$old..$new"; fi
  if git log --name-only --format= $range | grep -q '^secrets/'; then
    echo "refusing $ref: $GITHUB_USER_LOGIN may not push secrets/ to $GITHUB_REPO_NAME (public=$GITHUB_REPO_PUBLIC)"
    exit 1
  fi
done
`

type hookJSON struct {
	ID               int64  `json:"id"`
	Name             string `json:"name"`
	Enforcement      string `json:"enforcement"`
	ConfigurationURL string `json:"configuration_url"`
	AllowDownstream  *bool  `json:"allow_downstream_configuration"`
	Environment      struct {
		ID int64 `json:"id"`
	} `json:"environment"`
	ScriptRepository struct {
		FullName string `json:"full_name"`
	} `json:"script_repository"`
}

type envJSON struct {
	ID         int64  `json:"id"`
	Name       string `json:"name"`
	Default    bool   `json:"default_environment"`
	HooksCount int    `json:"hooks_count"`
	Download   struct {
		State string `json:"state"`
	} `json:"download"`
}

func decode[T any](t *testing.T, what string, body []byte) T {
	t.Helper()
	var v T
	apptest.Must(t, what, json.Unmarshal(body, &v))
	return v
}

// TestPreReceiveHooks: a site administrator keeps a hook script in a
// repository and makes it a hook; enabled, it refuses git pushes and the
// contents API's writes that touch secrets/ (with the script's output);
// in testing it lets them through; an organization that may configure it
// turns it off, and removing that override turns it on again; a
// repository cannot override what its organization does not allow.
func TestPreReceiveHooks(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	root := env.User("root", apptest.UserOpts{SiteAdmin: true})
	octo := env.User("octo")
	admin := env.Token(root, "site_admin", "repo", "admin:org")
	env.Repo(root, "hooks")
	acme := env.Org("acme", root, octo)
	env.Repo(acme, "app")
	tools := apptest.WorkTree(t, map[string]string{"checks/no-secrets.sh": noSecrets})
	apptest.Git(t, tools, "push", "-q", env.GitURL("root", "hooks", "root", admin), "HEAD:refs/heads/main")
	work := apptest.WorkTree(t, map[string]string{"README.md": "app\n"})
	appURL := env.GitURL("acme", "app", "root", admin)
	apptest.Git(t, work, "push", "-q", appURL, "HEAD:refs/heads/main")
	var hook hookJSON

	apptest.Step(t, "environments: the default one and a stored one", func(t *testing.T) {
		resp, body := env.Do("GET", "/admin/pre-receive-environments", admin, nil)
		apptest.WantStatus(t, "list environments", resp, body, http.StatusOK)
		list := decode[[]envJSON](t, "environments", body)
		if len(list) != 1 || !list[0].Default || list[0].Name != "Default" {
			t.Fatalf("environments: %s", body)
		}
		def := list[0].ID
		resp, body = env.DoJSON("POST", "/admin/pre-receive-environments", admin, `{"name":"DevTools","image_url":"https://example.com/env.tar.gz"}`)
		apptest.WantStatus(t, "create environment", resp, body, http.StatusCreated)
		e := decode[envJSON](t, "environment", body)
		if e.Default || e.Name != "DevTools" || e.Download.State != "not_started" {
			t.Fatalf("created environment: %s", body)
		}
		path := fmt.Sprintf("/admin/pre-receive-environments/%d", e.ID)
		for query, want := range map[string]string{"": "DevTools,Default", "?sort=name&direction=asc": "Default,DevTools",
			"?direction=asc&per_page=1": "Default"} {
			resp, body := env.Do("GET", "/admin/pre-receive-environments"+query, admin, nil)
			apptest.WantStatus(t, "list "+query, resp, body, http.StatusOK)
			var names []string
			for _, e := range decode[[]envJSON](t, "environments", body) {
				names = append(names, e.Name)
			}
			if strings.Join(names, ",") != want {
				t.Fatalf("environments%s: %v, want %s", query, names, want)
			}
		}
		resp, body = env.Do("GET", "/admin/pre-receive-environments?sort=size", admin, nil)
		apptest.WantError(t, "an unknown sort", resp, body, http.StatusUnprocessableEntity)
		resp, body = env.DoJSON("PATCH", path, admin, `{"name":"DevTools 2"}`)
		apptest.WantStatus(t, "rename environment", resp, body, http.StatusOK)
		if decode[envJSON](t, "environment", body).Name != "DevTools 2" {
			t.Fatalf("renamed: %s", body)
		}
		resp, body = env.DoJSON("POST", "/admin/pre-receive-environments", admin, `{"name":"devtools 2","image_url":"x"}`)
		apptest.WantError(t, "a taken name", resp, body, http.StatusUnprocessableEntity)
		resp, body = env.DoJSON("POST", "/admin/pre-receive-environments", admin, `{"name":"x"}`)
		apptest.WantError(t, "no image_url", resp, body, http.StatusUnprocessableEntity)
		defPath := fmt.Sprintf("/admin/pre-receive-environments/%d", def)
		resp, body = env.DoJSON("PATCH", defPath, admin, `{"name":"mine"}`)
		apptest.WantError(t, "renaming the default", resp, body, http.StatusUnprocessableEntity)
		resp, body = env.Do("DELETE", defPath, admin, nil)
		apptest.WantError(t, "deleting the default", resp, body, http.StatusUnprocessableEntity)
		resp, body = env.Do("GET", defPath+"/downloads/latest", admin, nil)
		apptest.WantStatus(t, "download status", resp, body, http.StatusOK)
		resp, body = env.Do("DELETE", path, admin, nil)
		apptest.WantStatus(t, "delete environment", resp, body, http.StatusNoContent)
		resp, body = env.Do("GET", path, admin, nil)
		apptest.WantError(t, "a deleted environment", resp, body, http.StatusNotFound)
	})

	apptest.Step(t, "only site administrators", func(t *testing.T) {
		resp, body := env.Do("GET", "/admin/pre-receive-hooks", env.Token(octo, "site_admin"), nil)
		apptest.WantError(t, "a user lists hooks", resp, body, http.StatusForbidden)
		resp, body = env.Do("GET", "/orgs/acme/pre-receive-hooks", env.Token(octo, "admin:org"), nil)
		apptest.WantError(t, "a member lists the organization's hooks", resp, body, http.StatusForbidden)
		resp, body = env.Do("GET", "/admin/pre-receive-environments", "", nil)
		apptest.WantError(t, "anonymous", resp, body, http.StatusNotFound)
	})

	apptest.Step(t, "a hook is made from a script that exists", func(t *testing.T) {
		resp, body := env.DoJSON("POST", "/admin/pre-receive-hooks", admin,
			`{"name":"no secrets","script":"checks/missing.sh","script_repository":{"full_name":"root/hooks"},"environment":{"id":1}}`)
		apptest.WantError(t, "a missing script", resp, body, http.StatusUnprocessableEntity)
		resp, body = env.DoJSON("POST", "/admin/pre-receive-hooks", admin,
			`{"name":"no secrets","script":"checks/no-secrets.sh","script_repository":{"full_name":"root/hooks"},"environment":{"id":999}}`)
		apptest.WantError(t, "an unknown environment", resp, body, http.StatusUnprocessableEntity)
		resp, body = env.DoJSON("POST", "/admin/pre-receive-hooks", admin,
			`{"name":"no secrets","script":"checks/no-secrets.sh","script_repository":{"full_name":"root/hooks"},"environment":{"id":1},"enforcement":"sometimes"}`)
		apptest.WantError(t, "an unknown enforcement", resp, body, http.StatusUnprocessableEntity)
		resp, body = env.DoJSON("POST", "/admin/pre-receive-hooks", admin,
			`{"name":"no secrets","script":"checks/no-secrets.sh","script_repository":{"full_name":"root/hooks"},"environment":{"id":1},"enforcement":"enabled"}`)
		apptest.WantStatus(t, "create hook", resp, body, http.StatusCreated)
		hook = decode[hookJSON](t, "hook", body)
		if hook.Enforcement != "enabled" || hook.ScriptRepository.FullName != "root/hooks" || hook.Environment.ID != 1 ||
			hook.AllowDownstream == nil || *hook.AllowDownstream {
			t.Fatalf("created hook: %s", body)
		}
		resp, body = env.Do("DELETE", "/admin/pre-receive-environments/1", admin, nil)
		apptest.WantError(t, "deleting an environment in use", resp, body, http.StatusUnprocessableEntity)
	})

	secret := 0
	pushSecret := func(t *testing.T) (string, error) {
		secret++
		apptest.Commit(t, work, "a secret", map[string]string{fmt.Sprintf("secrets/key%d.txt", secret): "hunter2\n"})
		return apptest.TryGit(t, work, "push", appURL, "HEAD:refs/heads/main")
	}
	resetWork := func(t *testing.T) {
		apptest.Git(t, work, "fetch", "-q", appURL, "main")
		apptest.Git(t, work, "reset", "-q", "--hard", "FETCH_HEAD")
	}
	hookPath := fmt.Sprintf("/admin/pre-receive-hooks/%d", hook.ID)
	orgPath := fmt.Sprintf("/orgs/acme/pre-receive-hooks/%d", hook.ID)
	contents := func(path string) (*http.Response, []byte) {
		return env.DoJSON("PUT", "/repos/acme/app/contents/"+path, admin,
			`{"message":"add","content":"`+base64.StdEncoding.EncodeToString([]byte("x\n"))+`"}`)
	}

	apptest.Step(t, "enabled: git pushes and API writes touching secrets/ are refused", func(t *testing.T) {
		out, err := pushSecret(t)
		if err == nil || !strings.Contains(out, "remote: refusing refs/heads/main: root may not push secrets/ to acme/app (public=true)") {
			t.Fatalf("a secret pushed over git: %v\n%s", err, out)
		}
		resetWork(t)
		apptest.Commit(t, work, "docs", map[string]string{"docs/a.md": "a\n"})
		apptest.Git(t, work, "push", "-q", appURL, "HEAD:refs/heads/main")
		resp, body := contents("secrets/api.txt")
		e := apptest.WantError(t, "a secret written through the API", resp, body, http.StatusConflict)
		if !strings.Contains(e.Message, `Pre-receive hook "no secrets" declined the push: refusing refs/heads/main`) {
			t.Fatalf("refusal: %s", body)
		}
		resp, body = contents("docs/b.md")
		apptest.WantStatus(t, "a document written through the API", resp, body, http.StatusCreated)
		resetWork(t)
	})

	apptest.Step(t, "testing: the hook runs and lets the push through", func(t *testing.T) {
		resp, body := env.DoJSON("PATCH", hookPath, admin, `{"enforcement":"testing"}`)
		apptest.WantStatus(t, "hook to testing", resp, body, http.StatusOK)
		if out, err := pushSecret(t); err != nil {
			t.Fatalf("a push while testing: %v\n%s", err, out)
		}
	})

	apptest.Step(t, "an organization turns a configurable hook off, and back", func(t *testing.T) {
		resp, body := env.DoJSON("PATCH", orgPath, admin, `{"enforcement":"disabled"}`)
		apptest.WantError(t, "an override the hook does not allow", resp, body, http.StatusUnprocessableEntity)
		resp, body = env.DoJSON("PATCH", hookPath, admin, `{"enforcement":"enabled","allow_downstream_configuration":true}`)
		apptest.WantStatus(t, "hook enabled, configurable", resp, body, http.StatusOK)
		if out, err := pushSecret(t); err == nil {
			t.Fatalf("a secret pushed with the hook enabled:\n%s", out)
		}
		resetWork(t)
		resp, body = env.DoJSON("PATCH", orgPath, admin, `{"enforcement":"disabled","allow_downstream_configuration":false}`)
		apptest.WantStatus(t, "organization override", resp, body, http.StatusOK)
		h := decode[hookJSON](t, "organization's hook", body)
		if h.Enforcement != "disabled" || !strings.HasSuffix(h.ConfigurationURL, orgPath) {
			t.Fatalf("organization's hook: %s", body)
		}
		if out, err := pushSecret(t); err != nil {
			t.Fatalf("a push with the organization's hook disabled: %v\n%s", err, out)
		}
		resp, body = env.Do("GET", "/orgs/acme/pre-receive-hooks", admin, nil)
		apptest.WantStatus(t, "organization's hooks", resp, body, http.StatusOK)
		if list := decode[[]hookJSON](t, "organization's hooks", body); len(list) != 1 || list[0].Enforcement != "disabled" {
			t.Fatalf("organization's hooks: %s", body)
		}

		c := env.Client(admin)
		_, gresp, err := c.Repositories.UpdatePreReceiveHook(apptest.Ctx(), "acme", "app", hook.ID,
			github.UpdatePreReceiveHookRequest{Enforcement: github.Ptr("enabled")})
		if apptest.ResponseStatus(gresp) != http.StatusUnprocessableEntity {
			t.Fatalf("a repository override the organization does not allow: %v", err)
		}
		list, _, err := c.Repositories.ListPreReceiveHooks(apptest.Ctx(), "acme", "app", nil)
		apptest.Must(t, "repository's hooks", err)
		if len(list) != 0 {
			t.Fatalf("a disabled hook the repository cannot configure is listed: %v", list)
		}

		resp, body = env.Do("DELETE", orgPath, admin, nil)
		apptest.WantStatus(t, "remove the organization's override", resp, body, http.StatusOK)
		if h := decode[hookJSON](t, "organization's hook", body); h.Enforcement != "enabled" || !strings.HasSuffix(h.ConfigurationURL, hookPath) {
			t.Fatalf("after removal: %s", body)
		}
		if out, err := pushSecret(t); err == nil {
			t.Fatalf("a secret pushed after the override's removal:\n%s", out)
		}
		resetWork(t)

		got, _, err := c.Repositories.GetPreReceiveHook(apptest.Ctx(), "acme", "app", hook.ID)
		apptest.Must(t, "repository's hook", err)
		if got.GetEnforcement() != "enabled" {
			t.Fatalf("repository's hook: %v", got)
		}
		got, _, err = c.Repositories.UpdatePreReceiveHook(apptest.Ctx(), "acme", "app", hook.ID,
			github.UpdatePreReceiveHookRequest{Enforcement: github.Ptr("disabled")})
		apptest.Must(t, "repository override", err)
		if got.GetEnforcement() != "disabled" || !strings.HasSuffix(got.GetConfigURL(), "/repos/acme/app/pre-receive-hooks/"+fmt.Sprint(hook.ID)) {
			t.Fatalf("repository override: %v", got)
		}
		if out, err := pushSecret(t); err != nil {
			t.Fatalf("a push with the repository's hook disabled: %v\n%s", err, out)
		}
		_, err = c.Repositories.DeletePreReceiveHook(apptest.Ctx(), "acme", "app", hook.ID)
		apptest.Must(t, "remove the repository's override", err)
	})

	apptest.Step(t, "a deleted hook runs no more", func(t *testing.T) {
		resp, body := env.Do("DELETE", hookPath, admin, nil)
		apptest.WantStatus(t, "delete hook", resp, body, http.StatusNoContent)
		if out, err := pushSecret(t); err != nil {
			t.Fatalf("a push after the hook's deletion: %v\n%s", err, out)
		}
		resp, body = env.Do("GET", hookPath, admin, nil)
		apptest.WantError(t, "a deleted hook", resp, body, http.StatusNotFound)
	})

	apptest.Step(t, "a pull request's merge sees the pull request's head and base", func(t *testing.T) {
		apptest.Commit(t, tools, "merges", map[string]string{"checks/no-merges.sh": noMerges})
		apptest.Git(t, tools, "push", "-q", env.GitURL("root", "hooks", "root", admin), "HEAD:refs/heads/main")
		resp, body := env.DoJSON("POST", "/admin/pre-receive-hooks", admin,
			`{"name":"no merges","script":"checks/no-merges.sh","script_repository":{"full_name":"root/hooks"},"environment":{"id":1},"enforcement":"enabled"}`)
		apptest.WantStatus(t, "create hook", resp, body, http.StatusCreated)
		resetWork(t)
		apptest.Commit(t, work, "feature", map[string]string{"feature.txt": "f\n"})
		apptest.Git(t, work, "push", "-q", appURL, "HEAD:refs/heads/feature")
		c := env.Client(admin)
		pr, _, err := c.PullRequests.Create(apptest.Ctx(), "acme", "app", github.CreatePullRequest{
			Title: github.Ptr("feature"), Head: "feature", Base: "main"})
		apptest.Must(t, "open a pull request", err)
		_, gresp, err := c.PullRequests.Merge(apptest.Ctx(), "acme", "app", pr.GetNumber(), "", nil)
		if err == nil || !strings.Contains(err.Error(), "no merges of acme:feature into acme:main") {
			t.Fatalf("a merge the hook refuses: %d %v", apptest.ResponseStatus(gresp), err)
		}
	})
}

// noMerges refuses pull requests' merges, naming their head and base.
const noMerges = `#!/bin/sh
if [ -n "$GITHUB_PULL_REQUEST_HEAD" ]; then
  echo "no merges of $GITHUB_PULL_REQUEST_HEAD into $GITHUB_PULL_REQUEST_BASE"
  exit 1
fi
`
