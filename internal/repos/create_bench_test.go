package repos_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"

	"forgeapi/internal/apptest"
)

// BenchmarkCreateAutoInit measures POST /user/repos with auto_init, a
// .gitignore template and a license (the initial commit written by git
// before the creating transaction) against the same creation of an empty
// repository in the same run, and reports the ratio (auto_init/empty).
func BenchmarkCreateAutoInit(b *testing.B) {
	env := apptest.Start(b)
	octo := env.User("octo")
	c := env.Client(env.Token(octo, "repo"))
	n := 0
	create := func(init bool) time.Duration {
		n++
		r := &github.Repository{Name: github.Ptr(fmt.Sprintf("r%d", n))}
		if init {
			r.AutoInit, r.GitignoreTemplate, r.LicenseTemplate = github.Ptr(true), github.Ptr("Go"), github.Ptr("mit")
		}
		start := time.Now()
		if _, _, err := c.Repositories.Create(apptest.Ctx(), "", r); err != nil {
			b.Fatal(err)
		}
		return time.Since(start)
	}
	var empty, init time.Duration
	for b.Loop() {
		empty += create(false)
		init += create(true)
	}
	b.ReportMetric(float64(empty.Microseconds())/float64(b.N), "empty-µs/op")
	b.ReportMetric(float64(init.Microseconds())/float64(b.N), "auto_init-µs/op")
	b.ReportMetric(float64(init)/float64(empty), "ratio")
}
