package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/http"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"forgeapi/internal/store"
)

// runRSS measures the memory of a forgeapi serve child process (the
// server alone, not this tool) while it delivers webhooks at an offered
// rate: the repository PATCHes of the webhooks scenario, paced at
// -deliveries / -hooks events per second, against a server started the
// way the crash scenarios start theirs. It prints the deliveries' figures
// and the server's RSS: sampled every 100 ms (median and largest) and
// its peak (VmHWM). GOGC and GOMEMLIMIT of this tool's environment reach
// the child unchanged (say which were set with the figures).
//
//	forgeapi-bench rss [-deliveries 3000] [-hooks 10] [-duration 30s] [-bin PATH]
func runRSS(ctx context.Context, args []string) error {
	b := webhooksBench{}
	fs := flag.NewFlagSet("rss", flag.ContinueOnError)
	deliveries := fs.Float64("deliveries", 3000, "offered deliveries per second (events per second times -hooks)")
	fs.IntVar(&b.hooks, "hooks", 10, "hooks on the repository, each receiving every event")
	fs.DurationVar(&b.duration, "duration", 30*time.Second, "how long events are triggered")
	fs.IntVar(&b.workers, "workers", 32, "concurrent API clients")
	fs.DurationVar(&b.drain, "drain", 60*time.Second, "how long to wait for the last deliveries")
	bin := fs.String("bin", "", "forgeapi binary (default: go build it)")
	database := fs.String("database", "", "postgres://... base URL (a schema is created for the run); default SQLite")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if b.hooks < 1 || b.workers < 1 || *deliveries <= 0 {
		return errors.New("-hooks, -workers and -deliveries must be positive")
	}
	b.rate = *deliveries / float64(b.hooks)
	setup, rcv, hookURL, closeRig, err := newCrashRig(ctx, *bin, *database)
	if err != nil {
		return err
	}
	defer closeRig()
	// As the in-process webhooks scenario: no API rate limit (one token
	// makes far more than 5,000 calls an hour) and no per-hook delivery
	// limit, so that the offered rate is what the server meets.
	srv, err := setup.startServer("--webhook-allowed-hosts", "loopback", "--rate-limit", "off", "--webhook-rate-limit", "-1")
	if err != nil {
		return err
	}
	defer srv.kill()
	pid := srv.cmd.Process.Pid
	idle := processRSS(pid)
	client := &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{MaxIdleConnsPerHost: b.workers * 2}}
	hookIDs, err := createHooks(ctx, client, srv.url, setup.fx, hookURL, "repository", b.hooks)
	if err != nil {
		return err
	}
	if err := rcv.awaitPings(ctx, b.hooks, 30*time.Second); err != nil {
		return err
	}
	fmt.Printf("server: %s, %s; GOGC=%q GOMEMLIMIT=%q; RSS idle %.1f MB; offered %.0f deliveries/s (%.0f events/s, %d hooks) for %s; load average %s\n",
		setup.bin, setup.database(), os.Getenv("GOGC"), os.Getenv("GOMEMLIMIT"), float64(idle.rss)/1024,
		*deliveries, b.rate, b.hooks, b.duration, loadAverage())
	var mu sync.Mutex
	var samples []int64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		t := time.NewTicker(100 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				if m := processRSS(pid); m.rss > 0 {
					mu.Lock()
					samples = append(samples, m.rss)
					mu.Unlock()
				}
			}
		}
	}()
	rep := b.measure(ctx, client, srv.url, setup.fx, rcv)
	close(stop)
	<-sampled
	end := processRSS(pid)
	rep.Database = setup.database()
	// A delivery is logged just after its receiver answers.
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		if rep.DeliveriesLogged, err = setup.countLogged(ctx, hookIDs); err != nil {
			return err
		}
		if rep.DeliveriesLogged >= rep.DeliveriesExpected || time.Now().After(deadline) {
			break
		}
	}
	rep.AllDeliveredAndLogged = rep.DeliveriesReceived == rep.DeliveriesExpected && rep.BadSignatures == 0 &&
		rep.DeliveriesLogged >= rep.DeliveriesExpected
	if err := printJSON(rep); err != nil {
		return err
	}
	slices.Sort(samples)
	var median, largest int64
	if len(samples) > 0 {
		median, largest = samples[len(samples)/2], samples[len(samples)-1]
	}
	fmt.Printf("server RSS under load: median %.1f MB, largest sample %.1f MB, peak (VmHWM) %.1f MB; %d samples; load average %s\n",
		float64(median)/1024, float64(largest)/1024, float64(end.hwm)/1024, len(samples), loadAverage())
	return nil
}

// countLogged counts the hooks' successful deliveries in the delivery
// log through a connection of the tool's own.
func (s *crashSetup) countLogged(ctx context.Context, hookIDs []int64) (int64, error) {
	db, err := store.Open(ctx, s.dsn, s.dataDir)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	return countLogged(ctx, db, hookIDs)
}

// memory is a process's resident set in KB: now and its peak.
type memory struct{ rss, hwm int64 }

// processRSS reads VmRSS and VmHWM from /proc/PID/status (zeros when the
// process is gone).
func processRSS(pid int) memory {
	var m memory
	raw, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/status")
	if err != nil {
		return m
	}
	for _, line := range strings.Split(string(raw), "\n") {
		name, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(value), " kB"), 10, 64)
		switch name {
		case "VmRSS":
			m.rss = n
		case "VmHWM":
			m.hwm = n
		}
	}
	return m
}
