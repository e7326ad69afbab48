package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// crashWebhooksReport is the JSON output of `crash webhooks`.
type crashWebhooksReport struct {
	Scenario string `json:"scenario"`
	Database string `json:"database"`
	Servers  int    `json:"servers"`
	Runs     int    `json:"runs"`
	Hooks    int    `json:"hooks"`
	Kills    int    `json:"kills"`
	// EventsAccepted are the events whose API call answered 200; only
	// their deliveries are counted.
	EventsAccepted int64 `json:"events_accepted"`
	// CallsCutOff are the API calls a kill cut off (their event may or
	// may not exist; its deliveries are not counted).
	CallsCutOff int64 `json:"calls_cut_off"`
	deliveryTally
	// SendsCutOff are deliveries a kill cut off before the receiver
	// answered; they are sent again when their lease ends, by design.
	SendsCutOff      int64   `json:"sends_cut_off"`
	DrainSec         float64 `json:"drain_seconds"` // from the end of the last burst to the last delivery received
	ElapsedSec       float64 `json:"elapsed_seconds"`
	NoLossNoDupNoBad bool    `json:"no_loss_no_duplicate_no_bad_signature"`
}

// fleet is the servers of a crash run; a killed one is down ("" URL)
// until restarted.
type fleet struct {
	setup *crashSetup
	extra []string
	mu    sync.Mutex
	srv   []*server
}

func (f *fleet) url(i int) string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.srv[i] == nil {
		return ""
	}
	return f.srv[i].url
}

// killAndRestart kills server i with SIGKILL and starts it again on the
// same data.
func (f *fleet) killAndRestart(i int) error {
	f.mu.Lock()
	srv := f.srv[i]
	f.srv[i] = nil
	f.mu.Unlock()
	srv.kill()
	next, err := f.setup.startServer(f.extra...)
	if err != nil {
		return err
	}
	f.mu.Lock()
	f.srv[i] = next
	f.mu.Unlock()
	return nil
}

func (f *fleet) stop() {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, s := range f.srv {
		if s != nil {
			s.kill()
		}
	}
}

// runCrashWebhooks triggers bursts of repository events through the API
// of one or more servers, kills one server with SIGKILL in the middle of
// each burst (deliveries in flight, others due, API calls under way),
// restarts it, and in the end counts the deliveries lost, duplicated and
// badly signed at a receiver that answers after a short delay.
func runCrashWebhooks(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("crash webhooks", flag.ContinueOnError)
	runs := fs.Int("n", 3, "bursts, each with one kill -9 and a restart")
	events := fs.Int("events", 300, "events per burst")
	hooks := fs.Int("hooks", 5, "hooks, each receiving every event")
	workers := fs.Int("workers", 4, "concurrent API clients")
	servers := fs.Int("servers", 1, "servers on the database (more than 1 needs -database)")
	database := fs.String("database", "", "postgres://... base URL (a schema is created for the run); default SQLite")
	bin := fs.String("bin", "", "forgeapi binary (default: go build it)")
	delay := fs.Duration("delay", 20*time.Millisecond, "how long the receiver takes to answer")
	kill := fs.Bool("kill", true, "kill a server in each burst (false: the same bursts without a crash, for comparison)")
	drain := fs.Duration("drain", 90*time.Second, "how long to wait for the last deliveries")
	timeout := fs.Duration("timeout", crashTimeout, "bound of the whole scenario")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	if *runs < 1 || *runs > 50 || *events < 3 || *events > 100000 || *hooks < 1 || *workers < 1 || *servers < 1 || *servers > 8 {
		return errors.New("want -n in 1..50, -events in 3..100000, -servers in 1..8, positive -hooks and -workers")
	}
	if *servers > 1 && *database == "" {
		return errors.New("several servers share one database only on PostgreSQL: pass -database postgres://...")
	}
	start := time.Now()
	setup, rcv, hookURL, stop, err := newCrashRig(ctx, *bin, *database)
	if err != nil {
		return err
	}
	defer stop()
	rcv.delay.Store(int64(*delay))

	// A short timeout keeps the lease (timeout + 10 s) and so the drain short.
	f := &fleet{setup: setup, extra: []string{"--webhook-allowed-hosts", "loopback", "--webhook-timeout", "2s"}}
	defer f.stop()
	for range *servers {
		srv, err := setup.startServer(f.extra...)
		if err != nil {
			return err
		}
		f.srv = append(f.srv, srv)
	}
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: *workers * 2}}
	if _, err := createHooks(ctx, client, f.url(0), setup.fx, hookURL, "repository", *hooks); err != nil {
		return err
	}
	if err := rcv.awaitPings(ctx, *hooks, 30*time.Second); err != nil {
		return err
	}

	rep := crashWebhooksReport{Scenario: "crash webhooks", Database: setup.database(), Servers: *servers,
		Runs: *runs, Hooks: *hooks}
	var cutOff atomic.Int64
	var lastRestart time.Time
	for run := range *runs {
		victim := run % *servers
		if err := crashBurst(ctx, client, f, []*benchFixture{setup.fx}, rcv, run, *events, *workers, victim, *kill, &cutOff); err != nil {
			return err
		}
		if *kill {
			rep.Kills++
		}
		lastRestart = time.Now()
	}
	rep.EventsAccepted = rcv.eventCount()
	rep.CallsCutOff = cutOff.Load()
	rcv.await(ctx, rep.EventsAccepted*int64(*hooks), *drain)
	if rep.deliveryTally, err = tally(ctx, setup, rcv, rep.EventsAccepted*int64(*hooks), *drain); err != nil {
		return err
	}
	rep.SendsCutOff = rcv.cutOff.Load()
	rep.DrainSec = max(rcv.lastReceipt().Sub(lastRestart).Seconds(), 0)
	rep.ElapsedSec = time.Since(start).Seconds()
	rep.NoLossNoDupNoBad = rep.Lost == 0 && rep.Duplicates == 0 && rep.BadSignatures == 0
	return printJSON(rep)
}

// crashBurst sends one burst of events, spread over the servers and
// over the repositories (in turn), and kills the victim with SIGKILL once
// a third of the burst was accepted (unless kill is false); calls to it
// wait for its restart.
func crashBurst(ctx context.Context, client *http.Client, f *fleet, repos []*benchFixture, rcv *receiver,
	run, events, workers, victim int, kill bool, cutOff *atomic.Int64) error {
	var next, accepted atomic.Int64
	killAt := int64(events / 3)
	if !kill {
		killAt = -1
	}
	killed := make(chan error, 1)
	var once sync.Once
	deadline := time.Now().Add(2 * time.Minute)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1)
				if i > int64(events) {
					return
				}
				desc := "crash-" + strconv.Itoa(run) + "-" + strconv.FormatInt(i, 10)
				target := (w + int(i)) % len(f.srv)
				fx := repos[int(i)%len(repos)]
				for {
					if ctx.Err() != nil || time.Now().After(deadline) {
						return
					}
					base := f.url(target)
					if base == "" { // being restarted
						time.Sleep(10 * time.Millisecond)
						continue
					}
					rcv.sent(desc, time.Now())
					resp, err := call(ctx, client, "PATCH", base+"/repos/"+fx.owner+"/"+fx.repo, fx.token,
						`{"description":"`+desc+`"}`)
					if err != nil || resp.status != http.StatusOK {
						rcv.unsent(desc)
						cutOff.Add(1)
						break
					}
					if accepted.Add(1) == killAt {
						once.Do(func() { go func() { killed <- f.killAndRestart(victim) }() })
					}
					break
				}
			}
		}()
	}
	wg.Wait()
	if !kill {
		return ctx.Err()
	}
	once.Do(func() { go func() { killed <- f.killAndRestart(victim) }() }) // a burst too small to reach killAt
	if err := <-killed; err != nil {
		return fmt.Errorf("restart after kill: %w", err)
	}
	return ctx.Err()
}
