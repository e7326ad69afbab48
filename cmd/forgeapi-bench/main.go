// Command forgeapi-bench runs load scenarios against a real forgeapi
// server started in-process, and crash scenarios against forgeapi
// servers run as child processes and killed with SIGKILL, and prints what
// it measured.
//
//	forgeapi-bench artifacts [flags]
//	forgeapi-bench feeds [flags]
//	forgeapi-bench read [-compare-bare] [flags]
//	forgeapi-bench rss [-deliveries 3000] [flags]
//	forgeapi-bench start -data DIR [flags]
//	forgeapi-bench webhooks [-compare-bare] [flags]
//	forgeapi-bench writes [-database postgres://...] [flags]
//	forgeapi-bench crash webhooks|pushes|merges [flags]
//	forgeapi-bench scale -database postgres://... [-servers 2] [flags]
package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"

	"forgeapi/internal/app"
)

// scenarios maps a scenario name to its runner; each parses its own flags.
var scenarios = map[string]func(ctx context.Context, args []string) error{
	"artifacts": runArtifacts,
	"crash":     runCrash,
	"feeds":     runFeeds,
	"read":      runRead,
	"rss":       runRSS,
	"scale":     runScale,
	"start":     runStart,
	"webhooks":  runWebhooks,
	"writes":    runWrites,
}

func main() {
	if len(os.Args) < 2 || scenarios[os.Args[1]] == nil {
		fmt.Fprintln(os.Stderr, "usage: forgeapi-bench SCENARIO [flags]; scenarios: artifacts, crash, feeds, read, rss, start, webhooks, writes")
		os.Exit(2)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if err := scenarios[os.Args[1]](ctx, os.Args[2:]); err != nil {
		fmt.Fprintln(os.Stderr, "forgeapi-bench:", err)
		os.Exit(1)
	}
}

// discardLogger is the logger of an in-process server: what `forgeapi
// serve` makes by default (text, info, so every access log line is
// formatted), writing to io.Discard.
func discardLogger() *slog.Logger {
	l, err := app.NewLogger(io.Discard, "info", app.LogFormatText)
	if err != nil {
		panic(err) // the arguments are constants
	}
	return l
}
