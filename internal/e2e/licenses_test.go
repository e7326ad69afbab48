package e2e_test

import (
	"encoding/base64"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
	"forgeapi/internal/licenses"
	"forgeapi/internal/reference"
)

// licenseText is the text of the platform's license key with its
// placeholders filled, as a LICENSE file holds it.
func licenseText(t testing.TB, key string) string {
	t.Helper()
	tables, err := reference.Load()
	apptest.Must(t, "reference tables", err)
	l := tables.License(key)
	if l == nil {
		t.Fatalf("no license %s", key)
	}
	return strings.NewReplacer("[year]", "2026", "[fullname]", "Octo Cat", "[yyyy]", "2026",
		"[name of copyright owner]", "Octo Cat").Replace(l.Body)
}

// TestIdentify names the texts of the platform's common licenses by their
// keys, and a text no license has "other".
func TestIdentify(t *testing.T) {
	t.Parallel()
	for _, key := range []string{"mit", "apache-2.0", "gpl-3.0", "gpl-2.0", "lgpl-3.0", "agpl-3.0", "bsd-2-clause",
		"bsd-3-clause", "mpl-2.0", "unlicense", "isc", "bsl-1.0", "epl-2.0", "cc0-1.0"} {
		if got := licenses.Identify([]byte(licenseText(t, key))); got != key {
			t.Errorf("%s identified as %s", key, got)
		}
	}
	for _, text := range []string{"All rights reserved. Do not copy.\n", "",
		licenseText(t, "mit") + "\n\n" + licenseText(t, "apache-2.0")} {
		if got := licenses.Identify([]byte(text)); got != licenses.OtherKey {
			t.Errorf("%.40q identified as %s", text, got)
		}
	}
}

// TestRepositoryLicense follows a repository's license as go-github
// reads it: the repository object's license after a push of an MIT
// LICENSE, GET .../license with the file (base64) and its license, a
// change of the license by a push, a license on another branch shown
// once it is the default branch, an unknown text as "other"
// (NOASSERTION, no url), and no license (null, 404) once the file is
// removed. A fork has its source's license.
func TestRepositoryLicense(t *testing.T) {
	t.Parallel()
	env := apptest.Start(t)
	ctx := apptest.Ctx()
	octo := env.User("octo")
	env.Repo(octo, "lib")
	token := env.Token(octo, "repo")
	c := env.Client(token)
	remote := env.GitURL("octo", "lib", "octo", token)
	work := apptest.WorkTree(t, map[string]string{"README.md": "# lib\n"})
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
	wantLicense := func(t *testing.T, key, spdx string) {
		t.Helper()
		r, _, err := c.Repositories.Get(ctx, "octo", "lib")
		apptest.Must(t, "get the repository", err)
		l := r.GetLicense()
		if key == "" {
			if r.License != nil {
				t.Fatalf("license %+v, want none", l)
			}
			return
		}
		if l.GetKey() != key || l.GetSPDXID() != spdx {
			t.Fatalf("license %+v, want %s %s", l, key, spdx)
		}
		if key == licenses.OtherKey {
			if l.URL != nil || l.GetName() != "Other" {
				t.Fatalf("other license %+v", l)
			}
		} else if l.GetURL() != env.URL+"/licenses/"+key {
			t.Fatalf("license url %s", l.GetURL())
		}
	}

	apptest.Step(t, "no license file", func(t *testing.T) {
		wantLicense(t, "", "")
		_, resp, err := c.Repositories.License(ctx, "octo", "lib")
		if err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("license of a repository without one: %v %v", resp, err)
		}
	})
	mit := licenseText(t, "mit")
	apptest.Step(t, "an MIT LICENSE pushed", func(t *testing.T) {
		apptest.Commit(t, work, "license", map[string]string{"LICENSE": mit})
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
		wantLicense(t, "mit", "MIT")
		rl, _, err := c.Repositories.License(ctx, "octo", "lib")
		apptest.Must(t, "get the license", err)
		content, err := base64.StdEncoding.DecodeString(rl.GetContent())
		apptest.Must(t, "decode", err)
		if string(content) != mit || rl.GetName() != "LICENSE" || rl.GetPath() != "LICENSE" || rl.GetLicense().GetKey() != "mit" ||
			rl.GetLicense().GetName() != "MIT License" || rl.GetType() != "file" || rl.GetEncoding() != "base64" ||
			rl.GetDownloadURL() != env.URL+"/raw/octo/lib/main/LICENSE" {
			t.Fatalf("license %+v", rl)
		}
		resp, body := env.Get(strings.TrimPrefix(rl.GetDownloadURL(), env.URL), "token "+token)
		if resp.StatusCode != http.StatusOK || string(body) != mit {
			t.Fatalf("download_url: %d", resp.StatusCode)
		}
	})
	apptest.Step(t, "the license changed by a push", func(t *testing.T) {
		apptest.Commit(t, work, "apache", map[string]string{"LICENSE": "", "LICENSE.md": licenseText(t, "apache-2.0")})
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
		wantLicense(t, "apache-2.0", "Apache-2.0")
		rl, _, err := c.Repositories.License(ctx, "octo", "lib")
		apptest.Must(t, "get the license", err)
		if rl.GetPath() != "LICENSE.md" || rl.GetLicense().GetSPDXID() != "Apache-2.0" {
			t.Fatalf("license %+v", rl)
		}
	})
	apptest.Step(t, "a fork has its source's license", func(t *testing.T) {
		hubot := env.User("hubot")
		hc := env.Client(env.Token(hubot, "repo"))
		_, _, err := hc.Repositories.CreateFork(ctx, "octo", "lib", nil)
		if _, accepted := err.(*github.AcceptedError); err != nil && !accepted {
			t.Fatalf("fork: %v", err)
		}
		fork, _, err := hc.Repositories.Get(ctx, "hubot", "lib")
		apptest.Must(t, "get the fork", err)
		if fork.GetLicense().GetKey() != "apache-2.0" {
			t.Fatalf("the fork's license %+v", fork.GetLicense())
		}
	})
	apptest.Step(t, "a license on another branch, then the default", func(t *testing.T) {
		apptest.Git(t, work, "checkout", "-q", "-b", "gpl")
		apptest.Commit(t, work, "gpl", map[string]string{"LICENSE.md": "", "COPYING": licenseText(t, "gpl-3.0")})
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/gpl")
		wantLicense(t, "apache-2.0", "Apache-2.0")
		resp, body := env.Get("/repos/octo/lib/license?ref=gpl", "token "+token)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(body), `"key":"gpl-3.0"`) {
			t.Fatalf("license of ref gpl: %d %s", resp.StatusCode, body)
		}
		_, _, err := c.Repositories.Edit(ctx, "octo", "lib", &github.Repository{DefaultBranch: github.Ptr("gpl")})
		apptest.Must(t, "change the default branch", err)
		wantLicense(t, "gpl-3.0", "GPL-3.0")
	})
	apptest.Step(t, "a text no license has", func(t *testing.T) {
		apptest.Commit(t, work, "custom", map[string]string{"COPYING": "Copyright Octo. All rights reserved; ask before copying.\n"})
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/gpl")
		wantLicense(t, licenses.OtherKey, "NOASSERTION")
	})
	apptest.Step(t, "the license file removed", func(t *testing.T) {
		apptest.Commit(t, work, "no license", map[string]string{"COPYING": ""})
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/gpl")
		wantLicense(t, "", "")
		resp, body := env.Get("/repos/octo/lib/license", "token "+token)
		apptest.WantStatus(t, "no license", resp, body, http.StatusNotFound)
	})
}
