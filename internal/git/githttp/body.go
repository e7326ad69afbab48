package githttp

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"net/http"
)

// peekSize is how much of a request body checkRequestBody looks at.
const peekSize = 512

// checkRequestBody looks at the start of a POST body, without consuming it,
// and returns what is wrong with a body that cannot be a request of service
// (empty, not starting with a pkt-line length, or gzip data that does not
// inflate), or "" for a body that may be one. git http-backend answers such
// bodies with 200 and nothing, which tells the client nothing. A request
// without the service's Content-Type is left to http-backend, which answers
// 415. r.Body is replaced by a reader that still yields the whole body.
func checkRequestBody(r *http.Request, service Service) string {
	if r.Header.Get("Content-Type") != "application/x-"+string(service)+"-request" {
		return ""
	}
	br := bufio.NewReaderSize(r.Body, peekSize)
	r.Body = struct {
		io.Reader
		io.Closer
	}{br, r.Body}
	head, _ := br.Peek(peekSize)
	switch r.Header.Get("Content-Encoding") {
	case "gzip", "x-gzip":
		plain := make([]byte, 4)
		zr, err := gzip.NewReader(bytes.NewReader(head))
		if err == nil {
			_, err = io.ReadFull(zr, plain)
		}
		switch {
		case err == nil:
			head = plain
		case errors.Is(err, io.ErrUnexpectedEOF) && len(head) == peekSize:
			return "" // the start inflates to too little to judge: let git read on
		default:
			return "malformed " + string(service) + " request: the gzip body does not inflate to a git request"
		}
	case "", "identity":
	default:
		return "" // http-backend refuses encodings it does not know
	}
	if len(head) < 4 || !isPktLength(head[:4]) {
		return "malformed " + string(service) + " request: the body does not start with a pkt-line"
	}
	return ""
}

// isPktLength reports whether b is a pkt-line length: four hex digits.
func isPktLength(b []byte) bool {
	for _, c := range b {
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F') {
			return false
		}
	}
	return true
}
