package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"math/rand/v2"
	"net/http"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
)

// writesBench is the writes scenario's configuration.
type writesBench struct {
	clients    int
	repos      int
	rounds     int
	round      time.Duration
	database   string
	dataDir    string
	cpuProfile string
}

// runWrites measures API writes, PATCH /repos/{owner}/{repo} with a new
// description, from -clients concurrent clients on one hot repository
// and spread over -repos repositories, in rounds alternating with a bare
// commit loop on the same database and pool: the same number of
// goroutines each committing one-row INSERTs, one per transaction. It
// prints calls (commits) per second and the ratios.
func runWrites(ctx context.Context, args []string) error {
	var b writesBench
	fs := flag.NewFlagSet("writes", flag.ContinueOnError)
	fs.IntVar(&b.clients, "clients", 16, "concurrent API clients (and goroutines of the bare loop)")
	fs.IntVar(&b.repos, "repos", 100, "repositories the spread writes go to")
	fs.IntVar(&b.rounds, "rounds", 3, "rounds of each")
	fs.DurationVar(&b.round, "round", 3*time.Second, "length of one round")
	fs.StringVar(&b.database, "database", "", "postgres://... (default SQLite in -data); on PostgreSQL a schema of its own, dropped after")
	fs.StringVar(&b.dataDir, "data", "", "data directory (default a temporary one, removed after)")
	fs.StringVar(&b.cpuProfile, "cpuprofile", "", "write a CPU profile of the measurements to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if b.clients < 1 || b.repos < 1 || b.rounds < 1 {
		return errors.New("-clients, -repos and -rounds must be positive")
	}
	if b.dataDir == "" {
		dir, err := os.MkdirTemp("", "forgeapi-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		b.dataDir = dir
	}
	dbURL := b.database
	var err error
	if dbURL != "" {
		var s crashSetup
		defer s.close()
		if dbURL, err = s.newSchema(dbURL); err != nil {
			return err
		}
	}
	m, err := app.Start(ctx, app.Config{Addr: "127.0.0.1:0", DataDir: b.dataDir, DatabaseURL: dbURL,
		Logger: discardLogger()})
	if err != nil {
		return err
	}
	defer m.Close()
	fx, err := webhooksFixture(ctx, m.App)
	if err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	names, err := moreRepos(ctx, m.App, fx.owner, b.repos)
	if err != nil {
		return err
	}
	db := m.App.DB
	ddl := `CREATE TABLE bench_commits (id INTEGER PRIMARY KEY, v TEXT NOT NULL)`
	if db.Dialect == store.Postgres {
		ddl = `CREATE TABLE bench_commits (id BIGSERIAL PRIMARY KEY, v TEXT NOT NULL)`
	}
	if err := execDDL(ctx, db, ddl); err != nil {
		return err
	}
	defer execDDL(context.WithoutCancel(ctx), db, `DROP TABLE bench_commits`)
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: b.clients * 2}}
	patch := func(pick func() string) func() error {
		return func() error {
			resp, err := call(ctx, client, "PATCH", m.URL()+"/repos/"+fx.owner+"/"+pick(), fx.token,
				`{"description":"w-`+strconv.FormatUint(rand.Uint64(), 36)+`"}`)
			if err == nil && resp.status != http.StatusOK {
				err = fmt.Errorf("PATCH: status %d: %s", resp.status, resp.body)
			}
			return err
		}
	}
	bare := func() error {
		return db.Tx(ctx, func(tx *store.Tx) error {
			_, err := tx.ExecContext(ctx, `INSERT INTO bench_commits (v) VALUES ($1)`, "x")
			return err
		})
	}
	kinds := []struct {
		name string
		op   func() error
	}{
		{"bare commit loop (one-row INSERT per transaction)", bare},
		{"PATCH /repos/{owner}/{repo}, one hot repository", patch(func() string { return fx.repo })},
		{fmt.Sprintf("PATCH /repos/{owner}/{repo}, spread over %d", len(names)), patch(func() string { return names[rand.IntN(len(names))] })},
	}
	stopProfile, err := startCPUProfile(b.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	fmt.Printf("writes on %s, %d clients, %d rounds of %s each, load average %s\n", db.Dialect, b.clients, b.rounds, b.round, loadAverage())
	done := make([]int64, len(kinds))
	errs := make([]int64, len(kinds))
	var spent [3]time.Duration
	for range b.rounds {
		for i, k := range kinds {
			n, e, d := hammer(ctx, b.clients, b.round, k.op)
			done[i] += n
			errs[i] += e
			spent[i] += d
		}
	}
	bareRate := float64(done[0]) / spent[0].Seconds()
	for i, k := range kinds {
		rate := float64(done[i]) / spent[i].Seconds()
		fmt.Printf("  %-60s %8.0f /s  ratio %.3f  (%d, %d errors)\n", k.name, rate, rate/bareRate, done[i], errs[i])
	}
	fmt.Printf("load average after: %s\n", loadAverage())
	return nil
}

// hammer runs op from n goroutines for d and counts the calls that
// succeeded and failed.
func hammer(ctx context.Context, n int, d time.Duration, op func() error) (ok, failed int64, elapsed time.Duration) {
	ctx, cancel := context.WithTimeout(ctx, d)
	defer cancel()
	var okN, failedN atomic.Int64
	start := time.Now()
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if err := op(); err != nil {
					failedN.Add(1)
				} else {
					okN.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	return okN.Load(), failedN.Load(), time.Since(start)
}

// moreRepos creates n repositories of the fixture's owner and returns
// their names.
func moreRepos(ctx context.Context, a *app.App, owner string, n int) ([]string, error) {
	acct, err := accounts.ByLogin(ctx, a.DB, owner)
	if err != nil {
		return nil, err
	}
	names := make([]string, n)
	for i := range names {
		names[i] = "spread-" + strconv.Itoa(i)
		if _, err := a.Repos.Create(ctx, repos.NewRepository{Owner: acct, Name: names[i]}, acct); err != nil {
			return nil, err
		}
	}
	return names, nil
}
