package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"forgeapi/internal/app"
)

// runStart measures how long `forgeapi serve` takes from exec to the
// answer of its first request on an existing data directory (the feeds
// fixture: `forgeapi-bench feeds -data DIR` keeps its million events),
// beside a bare reference measured the same way in alternating rounds: a
// trivial Go program, built for the run, that listens, logs a "listening
// on" line and answers 200; and `forgeapi version` from exec to exit (the
// cost of loading the binary and its package initializers). It prints min/median/max of both and the server's
// peak RSS (VmHWM) at the first answer and after -settle, when the
// background workers' first runs are done.
//
//	forgeapi-bench start -data DIR [-binary PATH] [-n 7] [-path /healthz]
func runStart(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("start", flag.ContinueOnError)
	dataDir := fs.String("data", "", "data directory of an existing forgeapi (required)")
	database := fs.String("database", "", "postgres://... (default SQLite in -data)")
	bin := fs.String("binary", "", "forgeapi binary (default: go build forgeapi/cmd/forgeapi into a temporary directory)")
	runs := fs.Int("n", 7, "runs of each")
	path := fs.String("path", "/healthz", "the first request's path")
	settle := fs.Duration("settle", 2*time.Second, "how long the server runs after its first answer before its peak RSS is read again")
	cpuProfile := fs.String("cpuprofile", "", "also start the server in-process -n times (each up to its first answer) and write a CPU profile of those starts to this file")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *dataDir == "" {
		return errors.New("start: -data DIR is required (e.g. the directory of `forgeapi-bench feeds -data DIR`)")
	}
	if *runs < 1 {
		return errors.New("start: -n must be at least 1")
	}
	if *bin == "" {
		dir, err := os.MkdirTemp("", "forgeapi-start-")
		if err != nil {
			return err
		}
		defer os.RemoveAll(dir)
		*bin = filepath.Join(dir, "forgeapi")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", *bin, "forgeapi/cmd/forgeapi").CombinedOutput(); err != nil {
			return fmt.Errorf("go build forgeapi (run from the module, or pass -binary): %v\n%s", err, out)
		}
	}
	bareBin, cleanup, err := buildBare(ctx)
	if err != nil {
		return err
	}
	defer cleanup()
	serveArgs := []string{"serve", "--addr", "127.0.0.1:0", "--data", *dataDir, "--log-level", "info"}
	if *database != "" {
		serveArgs = append(serveArgs, "--database", *database)
	}
	fmt.Printf("start to first answer of GET %s, %d runs each, alternating; load average %s\n", *path, *runs, loadAverage())
	var forge, ref []startRun
	var version []time.Duration
	for i := 0; i < *runs; i++ {
		begin := time.Now()
		if out, err := exec.CommandContext(ctx, *bin, "version").CombinedOutput(); err != nil {
			return fmt.Errorf("forgeapi version: %v\n%s", err, out)
		}
		version = append(version, time.Since(begin))
		r, err := measureStart(ctx, bareBin, nil, *path, 0)
		if err != nil {
			return fmt.Errorf("bare: %w", err)
		}
		ref = append(ref, r)
		r, err = measureStart(ctx, *bin, serveArgs, *path, *settle)
		if err != nil {
			return fmt.Errorf("forgeapi: %w", err)
		}
		forge = append(forge, r)
	}
	fmt.Printf("%-10s %10s %10s %10s %12s %12s %12s\n", "", "min", "median", "max", "listening", "RSS first", "RSS settled")
	for _, row := range []struct {
		name string
		runs []startRun
	}{{"bare", ref}, {"forgeapi", forge}} {
		first := durations(row.runs, func(r startRun) time.Duration { return r.first })
		listen := durations(row.runs, func(r startRun) time.Duration { return r.listening })
		fmt.Printf("%-10s %10s %10s %10s %12s %10.1fMB %10.1fMB\n", row.name,
			first[0].Round(100*time.Microsecond), first[len(first)/2].Round(100*time.Microsecond), first[len(first)-1].Round(100*time.Microsecond),
			listen[len(listen)/2].Round(100*time.Microsecond),
			maxKB(row.runs, func(r startRun) int64 { return r.rssFirst })/1024, maxKB(row.runs, func(r startRun) int64 { return r.rssSettled })/1024)
	}
	slices.Sort(version)
	fmt.Printf("%-10s %10s %10s %10s   (forgeapi version, exec to exit)\n", "version",
		version[0].Round(100*time.Microsecond), version[len(version)/2].Round(100*time.Microsecond), version[len(version)-1].Round(100*time.Microsecond))
	fmt.Printf("load average after: %s\n", loadAverage())
	if *cpuProfile != "" {
		return profileStarts(ctx, *dataDir, *database, *path, *runs, *cpuProfile)
	}
	return nil
}

// profileStarts starts the server in-process runs times, each up to its
// first answer to path, under a CPU profile, and prints how long each
// took.
func profileStarts(ctx context.Context, dataDir, database, path string, runs int, file string) error {
	stop, err := startCPUProfile(file)
	if err != nil {
		return err
	}
	defer stop()
	for i := 0; i < runs; i++ {
		begin := time.Now()
		m, err := app.Start(ctx, app.Config{Addr: "127.0.0.1:0", DataDir: dataDir, DatabaseURL: database,
			Logger: discardLogger()})
		if err != nil {
			return err
		}
		started := time.Since(begin)
		resp, err := http.Get(m.URL() + path)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
		}
		first := time.Since(begin)
		if cerr := m.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return err
		}
		fmt.Printf("in-process start %d: app.Start %s, first answer %s\n", i+1, started.Round(100*time.Microsecond), first.Round(100*time.Microsecond))
	}
	return nil
}

// startRun is one measured start.
type startRun struct {
	listening, first     time.Duration // exec to the "listening on" line, to the first answer
	rssFirst, rssSettled int64         // VmHWM in KB at the first answer and after settling
}

// measureStart execs bin with args, reads the address from its
// "listening on http://..." log line, requests path until it is
// answered without a server error, reads the peak RSS, waits settle,
// reads it again and stops the process.
func measureStart(ctx context.Context, bin string, args []string, path string, settle time.Duration) (startRun, error) {
	var r startRun
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	cmd.Stdout = io.Discard
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return r, err
	}
	begin := time.Now()
	if err := cmd.Start(); err != nil {
		return r, err
	}
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
	}()
	found := make(chan string, 1)
	lines := make(chan []string, 1)
	go func() {
		var tail []string
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if tail = append(tail, sc.Text()); len(tail) > 20 {
				tail = tail[1:]
			}
			if m := listeningLine.FindStringSubmatch(sc.Text()); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		lines <- tail
	}()
	var base string
	select {
	case base = <-found:
	case tail := <-lines:
		return r, fmt.Errorf("exited before listening:\n%s", strings.Join(tail, "\n"))
	case <-time.After(60 * time.Second):
		return r, errors.New("not listening after 60 s")
	}
	r.listening = time.Since(begin)
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{}}
	for {
		resp, err := client.Get(base + path)
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			if resp.StatusCode < 500 {
				break
			}
		}
		if time.Since(begin) > 60*time.Second {
			return r, fmt.Errorf("no answer to GET %s in 60 s (last: %v)", path, err)
		}
		time.Sleep(time.Millisecond)
	}
	r.first = time.Since(begin)
	r.rssFirst = peakRSS(cmd.Process.Pid)
	if settle > 0 {
		time.Sleep(settle)
	}
	r.rssSettled = peakRSS(cmd.Process.Pid)
	return r, nil
}

// bareSource is the reference server: a Go program that listens, logs
// the line forgeapi logs and answers 200 to anything.
const bareSource = `package main

import (
	"fmt"
	"net"
	"net/http"
	"os"
)

func main() {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	fmt.Fprintf(os.Stderr, "listening on http://%s\n", ln.Addr())
	_ = http.Serve(ln, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(` + "`" + `{"status":"ok"}` + "`" + `))
	}))
}
`

// buildBare builds bareSource into a temporary directory.
func buildBare(ctx context.Context) (string, func(), error) {
	dir, err := os.MkdirTemp("", "forgeapi-start-bare-")
	if err != nil {
		return "", nil, err
	}
	cleanup := func() { os.RemoveAll(dir) }
	for name, content := range map[string]string{"go.mod": "module bare\n\ngo 1.22\n", "main.go": bareSource} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(content), 0o644); err != nil {
			cleanup()
			return "", nil, err
		}
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", "bare", ".")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off", "GOFLAGS=-mod=mod")
	if out, err := cmd.CombinedOutput(); err != nil {
		cleanup()
		return "", nil, fmt.Errorf("go build the bare server: %v\n%s", err, out)
	}
	return filepath.Join(dir, "bare"), cleanup, nil
}

// peakRSS returns the process's VmHWM in KB, 0 when unknown.
func peakRSS(pid int) int64 { return processRSS(pid).hwm }

func durations(runs []startRun, f func(startRun) time.Duration) []time.Duration {
	out := make([]time.Duration, len(runs))
	for i, r := range runs {
		out[i] = f(r)
	}
	slices.Sort(out)
	return out
}

func maxKB(runs []startRun, f func(startRun) int64) float64 {
	var m int64
	for _, r := range runs {
		m = max(m, f(r))
	}
	return float64(m)
}
