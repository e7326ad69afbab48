package httpapi

import (
	"io"
	"strconv"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"
)

// AccessLines is implemented by a slog.Handler that lets the access log
// write its lines itself: Writer returns where the handler writes (each
// line is one Write, as the handler's own records are) and whether its
// lines are JSON (else slog's text format). The handler must be a plain
// slog TextHandler or JSONHandler in effect: no ReplaceAttr, no source, no
// attributes or groups of its own; a line written directly is byte for
// byte what it would write for the same record (appendAccessLine), without
// the record and the handler's generic formatting, which were most of the
// access log's cost per request.
type AccessLines interface {
	AccessLines() (w io.Writer, json bool)
}

// accessLine is one access log line's values (see logRequest).
type accessLine struct {
	end                time.Time
	method, route      string
	status             int
	bytes              int64
	elapsed            time.Duration
	requestID, kind    string
	accountID, tokenID int64
	client             string
}

// lineWriter writes access lines directly to an AccessLines handler's
// writer, from pooled buffers.
type lineWriter struct {
	w    io.Writer
	json bool
	bufs sync.Pool // of *[]byte
}

func (lw *lineWriter) write(l *accessLine) {
	bp, _ := lw.bufs.Get().(*[]byte)
	if bp == nil {
		b := make([]byte, 0, 256)
		bp = &b
	}
	*bp = appendAccessLine((*bp)[:0], l, lw.json)
	_, _ = lw.w.Write(*bp)
	if cap(*bp) <= maxPooledLine {
		lw.bufs.Put(bp)
	}
}

// maxPooledLine bounds the line buffers kept: a line made long by a
// client's method or address does not pin its memory.
const maxPooledLine = 4 << 10

// appendAccessLine appends l as slog's TextHandler (json false) or
// JSONHandler would write the record logRequest describes: time, level
// INFO, msg "request", then the attributes in order, and a newline.
func appendAccessLine(b []byte, l *accessLine, json bool) []byte {
	t := l.end.Round(0)
	if json {
		b = append(b, `{"time":"`...)
		b = t.AppendFormat(b, time.RFC3339Nano)
		b = append(b, `","level":"INFO","msg":"request","method":`...)
		b = appendJSONString(b, l.method)
		b = append(b, `,"route":`...)
		b = appendJSONString(b, l.route)
		b = append(b, `,"status":`...)
		b = strconv.AppendInt(b, int64(l.status), 10)
		b = append(b, `,"bytes":`...)
		b = strconv.AppendInt(b, l.bytes, 10)
		b = append(b, `,"duration":`...)
		b = strconv.AppendInt(b, int64(l.elapsed), 10)
		b = append(b, `,"request_id":`...)
		b = appendJSONString(b, l.requestID)
		b = append(b, `,"principal":`...)
		b = appendJSONString(b, l.kind)
		b = append(b, `,"principal_id":`...)
		b = strconv.AppendInt(b, l.accountID, 10)
		b = append(b, `,"token_id":`...)
		b = strconv.AppendInt(b, l.tokenID, 10)
		b = append(b, `,"client":`...)
		b = appendJSONString(b, l.client)
		return append(b, "}\n"...)
	}
	b = append(b, "time="...)
	b = appendRFC3339Millis(b, t)
	b = append(b, " level=INFO msg=request method="...)
	b = appendTextString(b, l.method)
	b = append(b, " route="...)
	b = appendTextString(b, l.route)
	b = append(b, " status="...)
	b = strconv.AppendInt(b, int64(l.status), 10)
	b = append(b, " bytes="...)
	b = strconv.AppendInt(b, l.bytes, 10)
	b = append(b, " duration="...)
	b = append(b, l.elapsed.String()...)
	b = append(b, " request_id="...)
	b = appendTextString(b, l.requestID)
	b = append(b, " principal="...)
	b = appendTextString(b, l.kind)
	b = append(b, " principal_id="...)
	b = strconv.AppendInt(b, l.accountID, 10)
	b = append(b, " token_id="...)
	b = strconv.AppendInt(b, l.tokenID, 10)
	b = append(b, " client="...)
	b = appendTextString(b, l.client)
	return append(b, '\n')
}

// appendRFC3339Millis appends t in RFC 3339 with exactly three fractional
// digits, the text handler's time format. RFC3339Nano drops trailing
// zeros, so a tenth of a millisecond is added to the truncated time to
// keep four digits, and the fourth is cut.
func appendRFC3339Millis(b []byte, t time.Time) []byte {
	const millisEnd = len("2006-01-02T15:04:05.000")
	n := len(b)
	b = t.Truncate(time.Millisecond).Add(time.Millisecond/10).AppendFormat(b, time.RFC3339Nano)
	return append(b[:n+millisEnd], b[n+millisEnd+1:]...)
}

// appendTextString appends s as the text handler writes a string value:
// as it is, or Go-quoted when it is empty or holds a space, '=', '"', a
// control character, invalid UTF-8 or a non-printing or space rune.
func appendTextString(b []byte, s string) []byte {
	if !textNeedsQuoting(s) {
		return append(b, s...)
	}
	if plainPrintable(s) { // a route pattern: quoted, nothing escaped
		b = append(b, '"')
		b = append(b, s...)
		return append(b, '"')
	}
	return strconv.AppendQuote(b, s)
}

// plainPrintable reports whether s is printable ASCII without '"' or
// '\\', which Go quoting leaves as it is.
func plainPrintable(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
			return false
		}
	}
	return true
}

func textNeedsQuoting(s string) bool {
	if s == "" {
		return true
	}
	for i := 0; i < len(s); {
		if c := s[i]; c < utf8.RuneSelf {
			if c < 0x20 || c == ' ' || c == '=' || c == '"' {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// appendJSONString appends s as a JSON string the way the JSON handler
// escapes it: '"' and '\\' escaped, \n \r \t by name, other control
// characters as \u00XX, invalid UTF-8 as \ufffd, U+2028 and U+2029
// escaped; everything else, '<', '>' and '&' included, as it is.
func appendJSONString(b []byte, s string) []byte {
	const hex = "0123456789abcdef"
	b = append(b, '"')
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			b = append(b, s[start:i]...)
			switch c {
			case '"', '\\':
				b = append(b, '\\', c)
			case '\n':
				b = append(b, '\\', 'n')
			case '\r':
				b = append(b, '\\', 'r')
			case '\t':
				b = append(b, '\\', 't')
			default:
				b = append(b, '\\', 'u', '0', '0', hex[c>>4], hex[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, s[start:i]...)
			b = append(b, `\ufffd`...)
		case r == '\u2028' || r == '\u2029':
			b = append(b, s[start:i]...)
			b = append(b, '\\', 'u', '2', '0', '2', hex[r&0xF])
		default:
			i += size
			continue
		}
		i += size
		start = i
	}
	b = append(b, s[start:]...)
	return append(b, '"')
}
