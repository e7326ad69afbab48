package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"net"
	"net/http"
	"os"
	"time"

	"forgeapi/internal/app"
)

// readBench is the read scenario's configuration.
type readBench struct {
	workers     int
	duration    time.Duration
	round       time.Duration
	compareBare bool
	database    string
	dataDir     string
	cpuProfile  string
	memProfile  string
}

// runRead measures authenticated reads, GET /repos/{owner}/{repo} and
// GET /user with a classic token, from one in-process server; with
// -compare-bare it alternates rounds of each with rounds of a bare
// net/http server that answers the same bytes (body and Content-Type)
// to the same client, and prints the ratio of their rates.
func runRead(ctx context.Context, args []string) error {
	var b readBench
	fs := flag.NewFlagSet("read", flag.ContinueOnError)
	fs.IntVar(&b.workers, "workers", 32, "concurrent clients (keep-alive connections)")
	fs.DurationVar(&b.duration, "duration", 10*time.Second, "how long each path is measured (all rounds together)")
	fs.DurationVar(&b.round, "round", time.Second, "length of one round")
	fs.BoolVar(&b.compareBare, "compare-bare", false, "alternate rounds with a bare net/http server answering the same bytes")
	fs.StringVar(&b.database, "database", "", "postgres://... (default SQLite in -data)")
	fs.StringVar(&b.dataDir, "data", "", "data directory (default a temporary one, removed after)")
	fs.StringVar(&b.cpuProfile, "cpuprofile", "", "write a CPU profile of the measurements to this file")
	fs.StringVar(&b.memProfile, "memprofile", "", "write an allocation profile (after the measurements) to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if b.workers < 1 || b.round <= 0 {
		return errors.New("-workers and -round must be positive")
	}
	if b.dataDir == "" {
		dir, err := os.MkdirTemp("", "forgeapi-bench-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		b.dataDir = dir
	}
	m, err := app.Start(ctx, app.Config{Addr: "127.0.0.1:0", DataDir: b.dataDir, DatabaseURL: b.database,
		Logger: discardLogger()})
	if err != nil {
		return err
	}
	defer m.Close()
	fx, err := webhooksFixture(ctx, m.App)
	if err != nil {
		return fmt.Errorf("fixture: %w", err)
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: b.workers * 2}}
	paths := []string{"/repos/" + fx.owner + "/" + fx.repo, "/user"}
	bare := newBareServer()
	for _, p := range paths {
		if err := bare.copyFrom(ctx, client, m.URL(), p, fx.token); err != nil {
			return err
		}
	}
	bareURL, stopBare, err := bare.serve()
	if err != nil {
		return err
	}
	defer stopBare()
	stopProfile, err := startCPUProfile(b.cpuProfile)
	if err != nil {
		return err
	}
	defer stopProfile()
	rounds := max(1, int(b.duration/b.round))
	fmt.Printf("authenticated reads, %d clients, %d rounds of %s, load average %s\n", b.workers, rounds, b.round, loadAverage())
	for _, p := range paths {
		get := func(base string) func() *http.Request {
			return func() *http.Request {
				req, _ := http.NewRequest("GET", base+p, nil)
				req.Header.Set("Authorization", "Bearer "+fx.token)
				return req
			}
		}
		load(ctx, client, "warm-up", b.workers, 300*time.Millisecond, http.StatusOK, get(m.URL()))
		var served, bareRuns []result
		for range rounds {
			if b.compareBare {
				bareRuns = append(bareRuns, load(ctx, client, "bare net/http, same bytes "+p, b.workers, b.round, http.StatusOK, get(bareURL)))
			}
			served = append(served, load(ctx, client, "forgeapi GET "+p, b.workers, b.round, http.StatusOK, get(m.URL())))
		}
		fmt.Println("  " + merge(served).String())
		if b.compareBare {
			lo, hi := math.Inf(1), math.Inf(-1)
			for i := range served {
				r := served[i].rps() / bareRuns[i].rps()
				lo, hi = min(lo, r), max(hi, r)
			}
			fmt.Printf("  %s\n  ratio %.2f (rounds %.2f to %.2f)\n", merge(bareRuns).String(),
				merge(served).rps()/merge(bareRuns).rps(), lo, hi)
		}
	}
	fmt.Printf("load average after: %s\n", loadAverage())
	return writeAllocProfile(b.memProfile)
}

// bareServer answers recorded responses (status, Content-Type, body) by
// path, the yardstick of the read scenario.
type bareServer struct {
	answers map[string]bareAnswer
}

type bareAnswer struct {
	status      int
	contentType string
	body        []byte
}

func newBareServer() *bareServer { return &bareServer{answers: map[string]bareAnswer{}} }

// copyFrom records forgeapi's answer to GET base+path with the token.
func (s *bareServer) copyFrom(ctx context.Context, client *http.Client, base, path, token string) error {
	req, err := http.NewRequestWithContext(ctx, "GET", base+path, nil)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		return err
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("GET %s: status %d: %s", path, resp.StatusCode, body)
	}
	s.answers[path] = bareAnswer{status: resp.StatusCode, contentType: resp.Header.Get("Content-Type"), body: body}
	return nil
}

func (s *bareServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	a, ok := s.answers[r.URL.Path]
	if !ok {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", a.contentType)
	w.WriteHeader(a.status)
	_, _ = w.Write(a.body)
}

// serve serves s on a port of 127.0.0.1.
func (s *bareServer) serve() (url string, stop func() error, err error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	srv := &http.Server{Handler: s}
	go func() { _ = srv.Serve(ln) }()
	return "http://" + ln.Addr().String(), srv.Close, nil
}

// loadAverage is the first three fields of /proc/loadavg ("?" when it
// cannot be read).
func loadAverage() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	f := bytes.Fields(raw)
	if len(f) < 3 {
		return "?"
	}
	return string(bytes.Join(f[:3], []byte(" ")))
}
