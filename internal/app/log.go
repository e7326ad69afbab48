package app

import (
	"fmt"
	"io"
	"log/slog"
	"strings"
)

// Log formats and levels accepted by --log-format and --log-level.
const (
	LogFormatText = "text"
	LogFormatJSON = "json"
)

// NewLogger returns the logger the command line configures: level is
// debug, info, warn or error; format is text (logfmt-style key=value) or
// json (one object a line). Requests are logged at info, so "warn" turns
// the access log off.
func NewLogger(w io.Writer, level, format string) (*slog.Logger, error) {
	var lv slog.Level
	if err := lv.UnmarshalText([]byte(level)); err != nil {
		return nil, fmt.Errorf("--log-level must be debug, info, warn or error, not %q", level)
	}
	opts := &slog.HandlerOptions{Level: lv}
	switch strings.ToLower(format) {
	case LogFormatText:
		return slog.New(slog.NewTextHandler(w, opts)), nil
	case LogFormatJSON:
		return slog.New(slog.NewJSONHandler(w, opts)), nil
	}
	return nil, fmt.Errorf("--log-format must be text or json, not %q", format)
}
