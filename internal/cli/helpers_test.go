package cli_test

import (
	"io"
	"log/slog"
)

// quietLogger discards the server's log.
func quietLogger() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }
