package e2e_test

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"forgeapi/internal/apptest"
	"forgeapi/internal/cli"
	"forgeapi/internal/store"
	"forgeapi/internal/testwait"
)

// TestServeEventRetentionFlag checks that `forgeapi serve
// --event-retention` sets the pruner's retention: events two days old
// survive the default (30 days) and are deleted by a server started with
// --event-retention 1d; a bad value is refused before the server starts.
func TestServeEventRetentionFlag(t *testing.T) {
	t.Parallel()
	clk := newFeedClock()
	clk.Add(-48 * time.Hour)
	env := apptest.Start(t, apptest.WithClock(clk.Now))
	env.Repo(env.User("alice"), "pub") // a CreateEvent two days old
	if n := countEvents(t, env); n != 1 {
		t.Fatalf("events stored: %d", n)
	}
	env.Stop()
	flags := []string{"--data", env.DataDir, "--addr", "127.0.0.1:0"}
	if env.Config.DatabaseURL != "" {
		flags = append(flags, "--database", env.Config.DatabaseURL)
	}

	var stderr bytes.Buffer
	if code := cli.Execute(context.Background(), append([]string{"serve", "--event-retention", "soon"}, flags...), &bytes.Buffer{}, &stderr); code == 0 ||
		!strings.Contains(stderr.String(), "--event-retention") {
		t.Fatalf("a bad --event-retention: exit %d, stderr %q", code, stderr.String())
	}

	db, err := store.Open(context.Background(), env.Config.DatabaseURL, env.DataDir)
	apptest.Must(t, "open the store", err)
	defer db.Close()
	count := func() int {
		var n int
		apptest.Must(t, "count events", db.QueryRowContext(context.Background(), `SELECT count(*) FROM events`).Scan(&n))
		return n
	}
	ctx, cancel := context.WithCancel(context.Background())
	var code int
	exited := make(chan struct{})
	go func() {
		defer close(exited)
		code = cli.Execute(ctx, append([]string{"serve", "--event-retention", "1d"}, flags...), &bytes.Buffer{}, &bytes.Buffer{})
	}()
	t.Cleanup(func() { cancel(); <-exited }) // stops the server if the test fails first
	testwait.For(t, "serve --event-retention 1d to prune the events two days old", func() error {
		select {
		case <-exited:
			t.Fatalf("serve exited with %d before pruning", code)
		default:
		}
		if n := count(); n != 0 {
			return fmt.Errorf("%d left", n)
		}
		return nil
	})
	cancel()
	<-exited
	if code != 0 {
		t.Fatalf("serve exited with %d", code)
	}
}
