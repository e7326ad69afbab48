package app

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
)

// Log formats and levels accepted by --log-format and --log-level.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// NewLogger returns the logger the command line configures: level is
// debug, info, warn or error; format is text (logfmt-style key=value) or
// json (one object a line). Requests are logged at info, so "warn" turns
// the access log off. Its handler offers the API server's access log the
// writer it writes to (httpapi.AccessLines), which the access log writes
// its lines to directly, in the same format.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level must be debug, info, warn or error, not %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	out := &lockedWriter{w: w}
	switch strings.ToLower(format) {
	case LogFormatText:
		return slog.New(lineHandler{slog.NewTextHandler(out, opts), out, false}), nil
	case LogFormatJSON:
		return slog.New(lineHandler{slog.NewJSONHandler(out, opts), out, true}), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}

// lineHandler is a slog text or JSON handler that also gives its writer
// to the access log (httpapi.AccessLines). A handler derived from it
// (WithAttrs, WithGroup) is the inner handler's, which offers none.
type lineHandler struct {
	slog.Handler
	out  io.Writer
	json bool
}

// AccessLines returns the handler's writer and whether it writes JSON.
func (h lineHandler) AccessLines() (io.Writer, bool) { return h.out, h.json }

// lockedWriter makes one Write at a time, so that the lines of the
// handler and those the access log writes itself never interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
