package e2e_test

import (
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// commitAs writes the files and commits them in dir as the author at the
// date (RFC 3339, its zone kept by git).
func commitAs(t *testing.T, dir, author, date string, files map[string]string) {
	t.Helper()
	for p, content := range files {
		full := filepath.Join(dir, filepath.FromSlash(p))
		apptest.Must(t, "mkdir", os.MkdirAll(filepath.Dir(full), 0o755))
		apptest.Must(t, "write "+p, os.WriteFile(full, []byte(content), 0o644))
		apptest.Git(t, dir, "add", p)
	}
	apptest.Git(t, dir, "commit", "-q", "--allow-empty", "-m", "change", "--author="+author, "--date="+date)
}

func unix(s string) int64 {
	t, err := time.Parse(time.DateOnly, s)
	if err != nil {
		panic(err)
	}
	return t.Unix()
}

// TestStatistics follows a repository's statistics as go-github reads
// them: an empty repository (204, no languages), then three commits by
// the owner (two spellings of one email) and by an author with no
// account, in two time zones: every weekly statistic, the punch card,
// the contributors with and without anonymous ones, the languages; and
// a push that moves the default branch makes them computed again.
func TestStatistics(t *testing.T) {
	t.Parallel()
	now := time.Date(2026, 6, 17, 12, 0, 0, 0, time.UTC) // a Wednesday
	env := apptest.Start(t, apptest.WithClock(func() time.Time { return now }))
	ctx := apptest.Ctx()
	octo := env.User("octo", apptest.UserOpts{Email: "octo@example.com"})
	env.Repo(octo, "lib")
	token := env.Token(octo, "repo")
	c := env.Client(token)

	apptest.Step(t, "an empty repository has no statistics", func(t *testing.T) {
		_, resp, err := c.Repositories.ListContributorsStats(ctx, "octo", "lib")
		apptest.Must(t, "contributors stats", err)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("status %d, want 204", resp.StatusCode)
		}
		_, resp, err = c.Repositories.ListPunchCard(ctx, "octo", "lib")
		apptest.Must(t, "punch card", err)
		if resp.StatusCode != http.StatusNoContent {
			t.Fatalf("punch card status %d, want 204", resp.StatusCode)
		}
		langs, _, err := c.Repositories.ListLanguages(ctx, "octo", "lib")
		apptest.Must(t, "languages", err)
		if len(langs) != 0 {
			t.Fatalf("languages %v, want none", langs)
		}
		p, _, err := c.Repositories.ListParticipation(ctx, "octo", "lib")
		apptest.Must(t, "participation", err)
		if len(p.All) != 52 || len(p.Owner) != 52 {
			t.Fatalf("participation %+v, want 52 weeks", p)
		}
	})

	work := apptest.WorkTree(t, nil)
	mainGo := "package main\n\nfunc main() {}\n"
	commitAs(t, work, "Octo <octo@example.com>", "2026-06-01T10:00:00Z", map[string]string{
		"main.go": mainGo, "README.md": "# lib\n", "vendor/dep/dep.go": "package dep\n"})
	utilPy := "def f():\n    return 1\n"
	commitAs(t, work, "Stranger <stranger@example.net>", "2026-06-09T15:30:00+02:00", map[string]string{"util.py": utilPy})
	mainGo = "package main\n\nfunc main() { println() }\n"
	commitAs(t, work, "Octo Cat <OCTO@example.com>", "2026-06-16T09:00:00Z", map[string]string{"main.go": mainGo})
	remote := env.GitURL("octo", "lib", "octo", token)
	apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")

	apptest.Step(t, "contributors stats", func(t *testing.T) {
		stats, resp, err := c.Repositories.ListContributorsStats(ctx, "octo", "lib")
		apptest.Must(t, "contributors stats", err)
		if resp.StatusCode != http.StatusOK || len(stats) != 1 {
			t.Fatalf("status %d, %d contributors, want one (the author without account left out)", resp.StatusCode, len(stats))
		}
		s := stats[0]
		if s.GetAuthor().GetLogin() != "octo" || s.GetTotal() != 2 {
			t.Fatalf("contributor %s with %d commits, want octo with 2", s.GetAuthor().GetLogin(), s.GetTotal())
		}
		want := map[int64][3]int{unix("2026-05-31"): {1, 5, 0}, unix("2026-06-07"): {0, 0, 0}, unix("2026-06-14"): {1, 1, 1}}
		if len(s.Weeks) != len(want) {
			t.Fatalf("%d weeks, want %d", len(s.Weeks), len(want))
		}
		for _, w := range s.Weeks {
			x, ok := want[w.GetWeek().Unix()]
			if !ok || [3]int{w.GetCommits(), w.GetAdditions(), w.GetDeletions()} != x {
				t.Errorf("week %v: c=%d a=%d d=%d, want %v", w.GetWeek(), w.GetCommits(), w.GetAdditions(), w.GetDeletions(), x)
			}
		}
	})

	apptest.Step(t, "code frequency", func(t *testing.T) {
		freq, _, err := c.Repositories.ListCodeFrequency(ctx, "octo", "lib")
		apptest.Must(t, "code frequency", err)
		want := [][3]int64{{unix("2026-05-31"), 5, 0}, {unix("2026-06-07"), 2, 0}, {unix("2026-06-14"), 1, -1}}
		if len(freq) != len(want) {
			t.Fatalf("%d weeks, want %d", len(freq), len(want))
		}
		for i, f := range freq {
			got := [3]int64{f.GetWeek().Unix(), int64(f.GetAdditions()), int64(f.GetDeletions())}
			if got != want[i] {
				t.Errorf("week %d: %v, want %v", i, got, want[i])
			}
		}
	})

	apptest.Step(t, "commit activity and participation", func(t *testing.T) {
		act, _, err := c.Repositories.ListCommitActivity(ctx, "octo", "lib")
		apptest.Must(t, "commit activity", err)
		if len(act) != 52 {
			t.Fatalf("%d weeks, want 52", len(act))
		}
		last, prev := act[51], act[50]
		if last.GetWeek().Unix() != unix("2026-06-14") || last.GetTotal() != 1 || last.Days[2] != 1 {
			t.Errorf("last week %v total %d days %v, want 2026-06-14 with one commit on Tuesday", last.GetWeek(), last.GetTotal(), last.Days)
		}
		if prev.GetTotal() != 1 || prev.Days[2] != 1 { // 2026-06-09 13:30 UTC
			t.Errorf("week before: total %d days %v, want one commit on Tuesday", prev.GetTotal(), prev.Days)
		}
		p, _, err := c.Repositories.ListParticipation(ctx, "octo", "lib")
		apptest.Must(t, "participation", err)
		sum := func(xs []int) (n int) {
			for _, x := range xs {
				n += x
			}
			return n
		}
		// The last week is June 10 to 16, the one before June 3 to 9.
		if sum(p.All) != 3 || sum(p.Owner) != 2 || p.All[51] != 1 || p.Owner[51] != 1 || p.All[50] != 1 || p.Owner[50] != 0 {
			t.Errorf("participation all %v owner %v", p.All[48:], p.Owner[48:])
		}
	})

	apptest.Step(t, "punch card in each commit's zone", func(t *testing.T) {
		card, _, err := c.Repositories.ListPunchCard(ctx, "octo", "lib")
		apptest.Must(t, "punch card", err)
		if len(card) != 168 {
			t.Fatalf("%d hours, want 168", len(card))
		}
		got := map[[2]int]int{}
		for _, p := range card {
			if p.GetCommits() > 0 {
				got[[2]int{p.GetDay(), p.GetHour()}] = p.GetCommits()
			}
		}
		want := map[[2]int]int{{1, 10}: 1, {2, 15}: 1, {2, 9}: 1}
		if len(got) != len(want) {
			t.Fatalf("punch card %v, want %v", got, want)
		}
		for k, v := range want {
			if got[k] != v {
				t.Fatalf("punch card %v, want %v", got, want)
			}
		}
	})

	apptest.Step(t, "contributors, with and without anonymous ones", func(t *testing.T) {
		list, _, err := c.Repositories.ListContributors(ctx, "octo", "lib", nil)
		apptest.Must(t, "contributors", err)
		if len(list) != 1 || list[0].GetLogin() != "octo" || list[0].GetContributions() != 2 || list[0].GetType() != "User" {
			t.Fatalf("contributors %v, want octo with 2", list)
		}
		list, _, err = c.Repositories.ListContributors(ctx, "octo", "lib", &github.ListContributorsOptions{Anon: "1"})
		apptest.Must(t, "contributors with anonymous ones", err)
		if len(list) != 2 || list[1].GetType() != "Anonymous" || list[1].GetEmail() != "stranger@example.net" ||
			list[1].GetName() != "Stranger" || list[1].GetContributions() != 1 {
			t.Fatalf("contributors %v, want octo and an anonymous stranger", list)
		}
		list, resp, err := c.Repositories.ListContributors(ctx, "octo", "lib", &github.ListContributorsOptions{Anon: "true",
			ListOptions: github.ListOptions{PerPage: 1, Page: 2}})
		apptest.Must(t, "second page", err)
		if len(list) != 1 || list[0].GetType() != "Anonymous" || resp.PrevPage != 1 {
			t.Fatalf("page 2: %v (prev %d)", list, resp.PrevPage)
		}
	})

	apptest.Step(t, "languages", func(t *testing.T) {
		langs, _, err := c.Repositories.ListLanguages(ctx, "octo", "lib")
		apptest.Must(t, "languages", err)
		if len(langs) != 2 || langs["Go"] != len(mainGo) || langs["Python"] != len(utilPy) {
			t.Fatalf("languages %v, want Go %d and Python %d (vendored code and Markdown left out)", langs, len(mainGo), len(utilPy))
		}
	})

	apptest.Step(t, "a push computes them again", func(t *testing.T) {
		commitAs(t, work, "Octo <octo@example.com>", "2026-06-17T08:00:00Z", map[string]string{"lib.go": "package main\n"})
		apptest.Git(t, work, "push", "-q", remote, "HEAD:refs/heads/main")
		list, _, err := c.Repositories.ListContributors(ctx, "octo", "lib", nil)
		apptest.Must(t, "contributors", err)
		if len(list) != 1 || list[0].GetContributions() != 3 {
			t.Fatalf("contributors %v, want octo with 3", list)
		}
		langs, _, err := c.Repositories.ListLanguages(ctx, "octo", "lib")
		apptest.Must(t, "languages", err)
		if langs["Go"] != len(mainGo)+len("package main\n") {
			t.Fatalf("languages %v after the push", langs)
		}
	})

	apptest.Step(t, "a private repository's statistics are not shown to others", func(t *testing.T) {
		env.Repo(octo, "secret", apptest.RepoOpts{Private: true})
		other := env.Client(env.Token(env.User("other"), "repo"))
		_, resp, err := other.Repositories.ListParticipation(ctx, "octo", "secret")
		if err == nil || resp.StatusCode != http.StatusNotFound {
			t.Fatalf("another user read a private repository's statistics: %v", err)
		}
	})
}
