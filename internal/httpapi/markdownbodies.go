package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"strconv"
	"strings"
)

// BodyRenderer renders the Markdown body of a response's object for the
// platform's body media types (Config.Bodies): its HTML and its text.
// ctx is the request's (its target repository gives references their
// context).
type BodyRenderer func(ctx context.Context, body string) (html, text string, err error)

// bodyFormat is what a request's media type asks of Markdown bodies:
// application/vnd.github.html+json adds body_html, .text+json body_text,
// .full+json both; raw (the default) adds nothing.
type bodyFormat struct{ html, text bool }

func bodyFormatOf(r *http.Request) bodyFormat {
	switch MediaParam(r) {
	case "html":
		return bodyFormat{html: true}
	case "text":
		return bodyFormat{text: true}
	case "full":
		return bodyFormat{html: true, text: true}
	}
	return bodyFormat{}
}

// heldResponse holds a handler's response until renderBodies has added the
// rendered bodies to it.
type heldResponse struct {
	http.ResponseWriter // its Header is the response's
	status              int
	body                bytes.Buffer
}

func (b *heldResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *heldResponse) Write(p []byte) (int, error) {
	b.WriteHeader(http.StatusOK)
	return b.body.Write(p)
}

// serveWithBodies runs handle with its response held, then adds to every
// object of a successful JSON answer that has a string "body" its
// body_html and body_text as f asks, and writes the answer. The
// platform leaves "body" out of the html and text forms; forgeapi keeps
// it (no client reads its absence).
func (s *Server) serveWithBodies(w http.ResponseWriter, r *http.Request, f bodyFormat, handle func(http.ResponseWriter, *http.Request) error) error {
	held := &heldResponse{ResponseWriter: w}
	if err := handle(held, r); err != nil {
		return err
	}
	out := held.body.Bytes()
	if held.status >= 200 && held.status < 300 && strings.HasPrefix(w.Header().Get("Content-Type"), "application/json") {
		rendered, err := renderBodies(r.Context(), out, f, s.cfg.Bodies)
		if err != nil {
			return err
		}
		out = rendered
		w.Header().Set("Content-Length", strconv.Itoa(len(out)))
	}
	if held.status != 0 {
		w.WriteHeader(held.status)
	}
	_, err := w.Write(out)
	return err
}

// renderBodies decodes a JSON answer, adds the rendered bodies and
// encodes it again (an answer that is not JSON is returned as it is).
func renderBodies(ctx context.Context, answer []byte, f bodyFormat, render BodyRenderer) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(answer))
	dec.UseNumber() // ids beyond 2^53 stay exact
	var v any
	if err := dec.Decode(&v); err != nil {
		return answer, nil
	}
	if err := addBodies(ctx, v, f, render); err != nil {
		return nil, err
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// addBodies walks v and renders the body of every object that has one.
func addBodies(ctx context.Context, v any, f bodyFormat, render BodyRenderer) error {
	switch t := v.(type) {
	case []any:
		for _, e := range t {
			if err := addBodies(ctx, e, f, render); err != nil {
				return err
			}
		}
	case map[string]any:
		for _, e := range t {
			if err := addBodies(ctx, e, f, render); err != nil {
				return err
			}
		}
		if body, ok := t["body"].(string); ok {
			html, text, err := render(ctx, body)
			if err != nil {
				return err
			}
			if f.html {
				t["body_html"] = html
			}
			if f.text {
				t["body_text"] = text
			}
		}
	}
	return nil
}
