package main

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"time"

	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" driver for the schema of a run

	"forgeapi/internal/app"
	"forgeapi/internal/store"
)

// runCrash runs a crash scenario: real forgeapi servers started as child
// processes on 127.0.0.1, killed with SIGKILL while they work, restarted,
// and what they should have done counted afterwards.
//
//	forgeapi-bench crash webhooks [-n RUNS] [-database postgres://... -servers 2]
//	forgeapi-bench crash pushes [-n RUNS]
//	forgeapi-bench crash merges [-n PULLS] [-database postgres://...]
func runCrash(ctx context.Context, args []string) error {
	if len(args) == 0 || crashScenarios[args[0]] == nil {
		return errors.New("usage: forgeapi-bench crash webhooks|pushes|merges [flags]")
	}
	return crashScenarios[args[0]](ctx, args[1:])
}

// crashTimeout bounds a whole crash scenario unless -timeout says otherwise.
const crashTimeout = 5 * time.Minute

var crashScenarios = map[string]func(ctx context.Context, args []string) error{
	"webhooks": runCrashWebhooks,
	"pushes":   runCrashPushes,
	"merges":   runCrashMerges,
}

// crashSetup is what every crash scenario starts from: the forgeapi
// binary, a data directory and a database with the bench fixture (user
// "bench" with a token, repository bench/widgets).
type crashSetup struct {
	bin, dataDir, dsn string
	fx                *benchFixture
	cleanups          []func()
}

// newCrashSetup builds the binary (unless bin names one), creates the
// data directory and, for a PostgreSQL base URL, a schema of its own,
// and writes the fixture with an in-process server that it stops again.
func newCrashSetup(ctx context.Context, bin, baseDSN string) (*crashSetup, error) {
	s := &crashSetup{bin: bin}
	dir, err := os.MkdirTemp("", "forgeapi-crash-")
	if err != nil {
		return nil, err
	}
	s.cleanups = append(s.cleanups, func() { os.RemoveAll(dir) })
	s.dataDir = filepath.Join(dir, "data")
	if s.bin == "" {
		s.bin = filepath.Join(dir, "forgeapi")
		if out, err := exec.CommandContext(ctx, "go", "build", "-o", s.bin, "forgeapi/cmd/forgeapi").CombinedOutput(); err != nil {
			s.close()
			return nil, fmt.Errorf("go build forgeapi (run from the module, or pass -bin): %v\n%s", err, out)
		}
	}
	if baseDSN != "" {
		if s.dsn, err = s.newSchema(baseDSN); err != nil {
			s.close()
			return nil, err
		}
	}
	m, err := app.Start(ctx, app.Config{Addr: "127.0.0.1:0", DataDir: s.dataDir, DatabaseURL: s.dsn,
		Logger: discardLogger()})
	if err != nil {
		s.close()
		return nil, err
	}
	s.fx, err = webhooksFixture(ctx, m.App)
	if cerr := m.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		s.close()
		return nil, fmt.Errorf("fixture: %w", err)
	}
	return s, nil
}

// newCrashRig is newCrashSetup with a receiver for the hooks (secret
// "bench-secret"): it returns the setup, the receiver, the receiver's
// hook URL and the function that stops the receiver and removes the
// setup.
func newCrashRig(ctx context.Context, bin, baseDSN string) (*crashSetup, *receiver, string, func(), error) {
	setup, err := newCrashSetup(ctx, bin, baseDSN)
	if err != nil {
		return nil, nil, "", nil, err
	}
	rcv := newReceiver("bench-secret")
	hookURL, stopReceiver, err := serveReceiver(rcv)
	if err != nil {
		setup.close()
		return nil, nil, "", nil, err
	}
	return setup, rcv, hookURL, func() { _ = stopReceiver(); setup.close() }, nil
}

// newSchema creates a schema for the run in the PostgreSQL database at
// base and returns the URL that uses it; close drops it.
func (s *crashSetup) newSchema(base string) (string, error) {
	suffix := make([]byte, 4)
	_, _ = rand.Read(suffix)
	schema := "crash_" + hex.EncodeToString(suffix)
	db, err := store.OpenPostgresSQL(base)
	if err != nil {
		return "", err
	}
	defer db.Close()
	if _, err := db.Exec("CREATE SCHEMA " + schema); err != nil {
		return "", fmt.Errorf("create schema: %w", err)
	}
	s.cleanups = append(s.cleanups, func() {
		if db, err := store.OpenPostgresSQL(base); err == nil {
			_, _ = db.Exec("DROP SCHEMA " + schema + " CASCADE")
			db.Close()
		}
	})
	u, err := url.Parse(base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (s *crashSetup) close() {
	for i := len(s.cleanups) - 1; i >= 0; i-- {
		s.cleanups[i]()
	}
}

// database names the database for the report.
func (s *crashSetup) database() string {
	if s.dsn != "" {
		return "postgres"
	}
	return "sqlite"
}

// pendingDeliveries counts the webhook deliveries not done yet, through
// a connection of the tool's own: those pending in the log, and the
// payloads whose outbox still lists deliveries handed over unwritten.
func (s *crashSetup) pendingDeliveries(ctx context.Context) (int64, error) {
	db, err := store.Open(ctx, s.dsn, s.dataDir)
	if err != nil {
		return 0, err
	}
	defer db.Close()
	var n int64
	err = db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM hook_deliveries WHERE state = 'pending')
		+ (SELECT count(*) FROM hook_outboxes)`).Scan(&n)
	return n, err
}

// deliveryTally is what the receiver got of the deliveries expected,
// in the reports of the scenarios that run servers as child processes.
type deliveryTally struct {
	DeliveriesExpected int64 `json:"deliveries_expected"`
	DeliveriesReceived int64 `json:"deliveries_received"`
	Lost               int64 `json:"lost"`
	// Duplicates are deliveries of an event to a hook answered 200 more
	// than once (the same delivery GUID or a second delivery of the same
	// event payload).
	Duplicates    int64 `json:"duplicates"`
	BadSignatures int64 `json:"bad_signatures"`
	PendingAtEnd  int64 `json:"pending_at_end"`
}

// tally waits (up to drain) until no delivery is pending, then counts
// what rcv received of the expected deliveries.
func tally(ctx context.Context, setup *crashSetup, rcv *receiver, expected int64, drain time.Duration) (deliveryTally, error) {
	t := deliveryTally{DeliveriesExpected: expected}
	var err error
	if t.PendingAtEnd, err = setup.awaitNoPending(ctx, drain); err != nil {
		return t, err
	}
	t.DeliveriesReceived = int64(len(rcv.latencies()))
	t.Lost = expected - t.DeliveriesReceived
	t.Duplicates = rcv.duplicates.Load()
	t.BadSignatures = rcv.badSignatures.Load()
	return t, nil
}

// awaitNoPending waits (up to drain) until no delivery is pending, and
// returns how many still are: a delivery whose outcome was not recorded
// is sent again when its lease ends, and that second send must be
// counted.
func (s *crashSetup) awaitNoPending(ctx context.Context, drain time.Duration) (int64, error) {
	for deadline := time.Now().Add(drain); ; time.Sleep(100 * time.Millisecond) {
		n, err := s.pendingDeliveries(ctx)
		if err != nil || n == 0 || time.Now().After(deadline) || ctx.Err() != nil {
			return n, err
		}
	}
}

// server is a forgeapi serve child process.
type server struct {
	cmd  *exec.Cmd
	url  string
	done chan struct{} // closed when the process has exited
}

var listeningLine = regexp.MustCompile(`listening on (http://[0-9.:]+)`)

// startServer runs `forgeapi serve` on a free port of 127.0.0.1 and
// returns once it listens (60 s at most).
func (s *crashSetup) startServer(extra ...string) (*server, error) {
	args := append([]string{"serve", "--addr", "127.0.0.1:0", "--data", s.dataDir}, extra...)
	if s.dsn != "" {
		args = append(args, "--database", s.dsn)
	}
	cmd := exec.Command(s.bin, args...)
	// The server dies with the tool, whatever ends it.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	stderr, err := cmd.StderrPipe()
	if err != nil {
		return nil, err
	}
	cmd.Stdout = io.Discard
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	srv := &server{cmd: cmd, done: make(chan struct{})}
	found := make(chan string, 1)
	var mu sync.Mutex
	var tail []string // the last lines, for an error
	go func() {
		scanner := bufio.NewScanner(stderr)
		for scanner.Scan() {
			line := scanner.Text()
			mu.Lock()
			if tail = append(tail, line); len(tail) > 20 {
				tail = tail[1:]
			}
			mu.Unlock()
			if m := listeningLine.FindStringSubmatch(line); m != nil {
				select {
				case found <- m[1]:
				default:
				}
			}
		}
		_ = cmd.Wait()
		close(srv.done)
	}()
	select {
	case srv.url = <-found:
		return srv, nil
	case <-srv.done:
	case <-time.After(60 * time.Second):
		srv.kill()
	}
	mu.Lock()
	defer mu.Unlock()
	return nil, fmt.Errorf("forgeapi serve did not start listening:\n%s", strings.Join(tail, "\n"))
}

// stop ends the process with SIGTERM (a graceful shutdown) and waits for
// it; SIGKILL after 30 s.
func (srv *server) stop() {
	_ = srv.cmd.Process.Signal(syscall.SIGTERM)
	select {
	case <-srv.done:
	case <-time.After(30 * time.Second):
		srv.kill()
	}
}

// kill ends the process with SIGKILL and waits for it.
func (srv *server) kill() {
	_ = srv.cmd.Process.Kill()
	<-srv.done
}

// gitProcesses lists the running git processes whose arguments or
// working directory lie in dir (the server's data directory): git the
// server started and that outlived it.
func gitProcesses(dir string) []string {
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		pid := e.Name()
		if pid[0] < '0' || pid[0] > '9' {
			continue
		}
		raw, err := os.ReadFile(filepath.Join("/proc", pid, "cmdline"))
		if err != nil || len(raw) == 0 {
			continue
		}
		args := strings.Split(strings.TrimRight(string(raw), "\x00"), "\x00")
		if !strings.HasPrefix(filepath.Base(args[0]), "git") {
			continue
		}
		cwd, _ := os.Readlink(filepath.Join("/proc", pid, "cwd"))
		cmdline := strings.Join(args, " ")
		if cwd == dir || strings.HasPrefix(cwd, dir+"/") || strings.Contains(cmdline, dir+"/") {
			out = append(out, pid+": "+cmdline)
		}
	}
	return out
}

// printJSON writes v to stdout, indented.
func printJSON(v any) error {
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// progress writes a line about a crash run's progress to stderr.
func progress(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "crash: "+format+"\n", args...)
}
