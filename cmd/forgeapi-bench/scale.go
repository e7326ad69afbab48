package main

import (
	"context"
	"database/sql"
	"errors"
	"flag"
	"fmt"
	"forgeapi/internal/store"
	"net/http"
	"os"
	"strconv"
	"sync/atomic"
	"time"
)

// scaleReport is the JSON output of `scale`.
type scaleReport struct {
	Scenario string `json:"scenario"`
	Servers  int    `json:"servers"`
	Hooks    int    `json:"hooks"`
	Repos    int    `json:"repositories"`
	// DeliveriesPerSec maps a server count to its rounds' deliveries per
	// second (all the round's deliveries over the time from its first
	// API call to the last receipt).
	DeliveriesPerSec map[int][]float64 `json:"deliveries_per_second"`
	deliveryTally
	// Waits maps a server count to what the database's other sessions
	// were doing in samples of pg_stat_activity during its rounds
	// ("CPU" for an active session with no wait event).
	Waits map[int]map[string]int `json:"database_waits"`
}

// runScale measures scale-out on PostgreSQL: forgeapi serve processes on
// one database, rounds of repository events (PATCH /repos/{owner}/{repo}
// from -workers clients, spread over the servers running and over -repos
// repositories, each with -hooks hooks) alternating
// between one server and -servers servers, each round timed from its
// first API call to the last delivery received. In the end it counts
// deliveries lost, duplicated and badly signed over all rounds, and
// prints what the database sessions waited on.
func runScale(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("scale", flag.ContinueOnError)
	database := fs.String("database", "", "postgres://... base URL (a schema is created for the run); required")
	servers := fs.Int("servers", 2, "servers of the larger rounds")
	rounds := fs.Int("rounds", 2, "rounds of each size")
	events := fs.Int("events", 1000, "events per round")
	hooks := fs.Int("hooks", 10, "hooks per repository, each receiving every event of it")
	repoCount := fs.Int("repos", 1, "repositories the events are spread over (1: every event changes one row)")
	workers := fs.Int("workers", 16, "concurrent API clients")
	bin := fs.String("bin", "", "forgeapi binary (default: go build it)")
	drain := fs.Duration("drain", 60*time.Second, "how long to wait for a round's last deliveries")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *database == "" || *servers < 2 || *servers > 8 || *rounds < 1 || *events < 1 || *hooks < 1 || *workers < 1 || *repoCount < 1 {
		return errors.New("want -database postgres://..., -servers in 2..8 and positive -rounds, -events, -hooks, -workers, -repos")
	}
	setup, rcv, hookURL, stop, err := newCrashRig(ctx, *bin, *database)
	if err != nil {
		return err
	}
	defer stop()
	f := &fleet{setup: setup, extra: []string{"--webhook-allowed-hosts", "loopback", "--rate-limit", "off", "--webhook-rate-limit", "-1"}}
	defer f.stop()
	first, err := setup.startServer(f.extra...)
	if err != nil {
		return err
	}
	f.srv = []*server{first}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *workers * 2}}
	repos, err := benchRepos(ctx, client, f.url(0), setup.fx, *repoCount)
	if err != nil {
		return err
	}
	for _, fx := range repos {
		if _, err := createHooks(ctx, client, f.url(0), fx, hookURL, "repository", *hooks); err != nil {
			return err
		}
	}
	if err := rcv.awaitPings(ctx, *hooks**repoCount, 30*time.Second); err != nil {
		return err
	}
	waits, err := newWaitSampler(setup.dsn)
	if err != nil {
		return err
	}
	defer waits.close()

	rep := scaleReport{Scenario: "scale", Servers: *servers, Hooks: *hooks, Repos: *repoCount, DeliveriesPerSec: map[int][]float64{},
		Waits: map[int]map[string]int{}}
	for round := range 2 * *rounds {
		n := 1
		if round%2 == 1 {
			n = *servers
		}
		if err := f.resize(n); err != nil {
			return err
		}
		stop := waits.start()
		rate, err := scaleRound(ctx, client, f, repos, rcv, round, *events, *workers, *hooks, *drain)
		sampled := stop()
		if err != nil {
			return err
		}
		rep.DeliveriesPerSec[n] = append(rep.DeliveriesPerSec[n], rate)
		if rep.Waits[n] == nil {
			rep.Waits[n] = map[string]int{}
		}
		for k, v := range sampled {
			rep.Waits[n][k] += v
		}
		fmt.Fprintf(os.Stderr, "scale: round %d: %d server(s) taking the API calls, %.0f deliveries/s\n", round+1, n, rate)
	}
	if rep.deliveryTally, err = tally(ctx, setup, rcv, rcv.eventCount()*int64(*hooks), *drain); err != nil {
		return err
	}
	return printJSON(rep)
}

// benchRepos returns the fixture's repository and n-1 more of its owner,
// created through the API.
func benchRepos(ctx context.Context, client *http.Client, base string, fx *benchFixture, n int) ([]*benchFixture, error) {
	repos := []*benchFixture{fx}
	for i := 1; i < n; i++ {
		name := "widgets-" + strconv.Itoa(i)
		resp, err := call(ctx, client, "POST", base+"/user/repos", fx.token, `{"name":"`+name+`"}`)
		if err != nil {
			return nil, err
		}
		if resp.status != http.StatusCreated {
			return nil, fmt.Errorf("create repository %s: status %d: %s", name, resp.status, resp.body)
		}
		repos = append(repos, &benchFixture{owner: fx.owner, repo: name, token: fx.token})
	}
	return repos, nil
}

// resize starts servers or stops the last ones (SIGTERM: a stopped
// server records the outcomes of its sends first) until n run.
func (f *fleet) resize(n int) error {
	for len(f.srv) < n {
		srv, err := f.setup.startServer(f.extra...)
		if err != nil {
			return err
		}
		f.srv = append(f.srv, srv)
	}
	for len(f.srv) > n {
		last := f.srv[len(f.srv)-1]
		f.srv = f.srv[:len(f.srv)-1]
		last.stop()
	}
	return nil
}

// scaleRound sends events through the fleet's servers and waits for all
// their deliveries; it returns the deliveries per second from the first
// call to the last receipt.
func scaleRound(ctx context.Context, client *http.Client, f *fleet, repos []*benchFixture, rcv *receiver,
	round, events, workers, hooks int, drain time.Duration) (float64, error) {
	before := rcv.receivedCount()
	start := time.Now()
	var cutOff atomic.Int64
	if err := crashBurst(ctx, client, f, repos, rcv, round, events, workers, 0, false, &cutOff); err != nil {
		return 0, err
	}
	if n := cutOff.Load(); n > 0 {
		return 0, fmt.Errorf("round %d: %d API calls failed", round+1, n)
	}
	want := before + int64(events*hooks)
	rcv.await(ctx, want, drain)
	if got := rcv.receivedCount(); got < want {
		return 0, fmt.Errorf("round %d: %d of %d deliveries received within %s", round+1, got-before, events*hooks, drain)
	}
	return float64(events*hooks) / rcv.lastReceipt().Sub(start).Seconds(), nil
}

// waitSampler samples pg_stat_activity of the run's database every 10 ms
// while started: what the server sessions were waiting on.
type waitSampler struct {
	db *sql.DB
}

func newWaitSampler(dsn string) (*waitSampler, error) {
	db, err := store.OpenPostgresSQL(dsn)
	if err != nil {
		return nil, err
	}
	db.SetMaxOpenConns(1)
	return &waitSampler{db: db}, nil
}

func (w *waitSampler) close() { w.db.Close() }

// start begins sampling; the function it returns stops and returns the
// counts, by wait ("type:event", "CPU", "idle in transaction").
func (w *waitSampler) start() func() map[string]int {
	counts := map[string]int{}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		tick := time.NewTicker(10 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-done:
				return
			case <-tick.C:
			}
			rows, err := w.db.Query(`SELECT state, coalesce(wait_event_type, ''), coalesce(wait_event, '')
				FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()
				AND state IN ('active', 'idle in transaction')`)
			if err != nil {
				continue
			}
			for rows.Next() {
				var state, typ, event string
				if rows.Scan(&state, &typ, &event) != nil {
					continue
				}
				switch {
				case state != "active":
					counts[state]++
				case typ == "":
					counts["CPU"]++
				default:
					counts[typ+":"+event]++
				}
			}
			rows.Close()
		}
	}()
	return func() map[string]int {
		close(done)
		<-ended
		return counts
	}
}
