package apptest

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"forgeapi/internal/httpapi"
)

// OpenAPIDirEnv names the environment variable with the generated/ folder
// of the npm package @octokit/openapi (the platform's OpenAPI
// descriptions). When it is set, or when testdata/node/node_modules holds
// the package (npm ci there), every response an apptest client receives
// is validated against the descriptions, and a mismatch fails the test.
const OpenAPIDirEnv = "FORGEAPI_TEST_OPENAPI_DIR"

// ValidatedCountEnv names an optional file to which each test binary
// appends, as each test server stops, how many exchanges it validated
// and skipped so far, and how many of the validated ones were GraphQL,
// after its process id (see CountValidated): the last line of each
// process id, summed, is the suite's count.
const ValidatedCountEnv = "FORGEAPI_TEST_OPENAPI_COUNT_FILE"

// description is one of the platform's OpenAPI documents, read through
// its split copy (openapi_trim.go): the index the first time an exchange
// needs it, each small document the first time an exchange needs that.
type description struct {
	file string // the platform's, named in mismatches
	part trimmedPart

	once    sync.Once
	dir     string                  // the split copy
	paths   map[string][]*matchPath // by the first segment and the number of segments, in matching order
	schemas map[string]string       // webhook schema name: document
	err     error

	mu     sync.Mutex
	pieces map[string]*piece // by document
}

// matchPath is an indexed path ready to match request paths.
type matchPath struct {
	indexedPath
	segments []string // the template's, split at "/"
	params   []bool   // whether each segment is a parameter
}

// piece is one small document of a split copy, loaded once.
type piece struct {
	once   sync.Once
	doc    *openapi3.T
	router routers.Router // operations part only
	err    error
}

// open reads the index of the split copy, making the copy when the
// cache has none. The paths are kept in kin-openapi's matching order
// (fewer parameters first, then reverse lexical order), the order its
// router tries them, so that a request matches the same operation it
// would in the whole document.
func (d *description) open() error {
	d.once.Do(func() {
		d.dir, d.err = trimmed(d.file, d.part)
		if d.err != nil {
			return
		}
		data, err := os.ReadFile(filepath.Join(d.dir, indexFile))
		if err != nil {
			d.err = err
			return
		}
		var index pieceIndex
		if d.err = json.Unmarshal(data, &index); d.err != nil {
			d.err = fmt.Errorf("%s: %w", filepath.Join(d.dir, indexFile), d.err)
			return
		}
		d.schemas = index.Schemas
		slices.SortFunc(index.Paths, func(a, b indexedPath) int {
			if c := cmp.Compare(strings.Count(a.Path, "}"), strings.Count(b.Path, "}")); c != 0 {
				return c
			}
			return cmp.Compare(b.Path, a.Path)
		})
		d.paths = map[string][]*matchPath{}
		for _, p := range index.Paths {
			m := &matchPath{indexedPath: p, segments: strings.Split(p.Path, "/")}
			m.params = make([]bool, len(m.segments))
			for i, seg := range m.segments {
				m.params[i] = strings.Contains(seg, "{")
			}
			key := pathKey(m.segments, m.params)
			d.paths[key] = append(d.paths[key], m)
		}
	})
	return d.err
}

// pathKey groups paths by the number of their segments and their first
// one after the leading "/" ("{" when that is a parameter: params says
// which segments are).
func pathKey(segments []string, params []bool) string {
	first := ""
	if len(segments) > 1 {
		first = segments[1]
		if params != nil && params[1] {
			first = "{"
		}
	}
	return fmt.Sprintf("%d/%s", len(segments), first)
}

// matches reports whether the request path's segments fit the template's:
// a literal segment is equal, a parameter is any non-empty segment.
func (m *matchPath) matches(segments []string) bool {
	for i, seg := range m.segments {
		if m.params[i] && segments[i] == "" || !m.params[i] && seg != segments[i] {
			return false
		}
	}
	return true
}

// findRoute returns the operation of the request, whose path is already
// the platform's, and its path parameters; a nil route when the
// description has no operation for the method and path.
func (d *description) findRoute(req *http.Request) (*routers.Route, map[string]string, error) {
	if err := d.open(); err != nil {
		return nil, nil, err
	}
	segments := strings.Split(req.URL.Path, "/")
	for _, key := range []string{pathKey(segments, nil), fmt.Sprintf("%d/{", len(segments))} {
		for _, m := range d.paths[key] {
			if !m.matches(segments) || !slices.Contains(m.Methods, req.Method) {
				continue
			}
			p, err := d.piece(m.File)
			if err != nil {
				return nil, nil, err
			}
			route, params, err := p.router.FindRoute(req)
			if errors.Is(err, routers.ErrPathNotFound) || errors.Is(err, routers.ErrMethodNotAllowed) {
				continue
			}
			return route, params, err
		}
	}
	return nil, nil, nil
}

// schema returns the webhook schema named name, nil when the description
// has none.
func (d *description) schema(name string) (*openapi3.Schema, error) {
	if err := d.open(); err != nil {
		return nil, err
	}
	file, ok := d.schemas[name]
	if !ok {
		return nil, nil
	}
	p, err := d.piece(file)
	if err != nil {
		return nil, err
	}
	if ref := p.doc.Components.Schemas[name]; ref != nil {
		return ref.Value, nil
	}
	return nil, nil
}

// piece returns the split copy's document file, loading it the first
// time; for the operations part, with its router.
func (d *description) piece(file string) (*piece, error) {
	d.mu.Lock()
	if d.pieces == nil {
		d.pieces = map[string]*piece{}
	}
	p := d.pieces[file]
	if p == nil {
		p = &piece{}
		d.pieces[file] = p
	}
	d.mu.Unlock()
	p.once.Do(func() {
		doc, err := openapi3.NewLoader().LoadFromFile(filepath.Join(d.dir, file))
		if err != nil {
			p.err = fmt.Errorf("load %s (%s of %s): %w", file, d.part, d.file, err)
			return
		}
		doc.Servers = nil // so that the router matches any host
		for _, item := range doc.Paths.Map() {
			item.Servers = nil
			for _, op := range item.Operations() {
				op.Servers = nil // the upload operation's uploads host
			}
		}
		p.doc = doc
		if d.part == operationsPart {
			p.router, p.err = gorillamux.NewRouter(doc)
		}
	})
	return p, p.err
}

// Validator checks exchanges against the platform's descriptions: the
// hosted one (api.github.com.json) first, then the enterprise cloud one
// (ghec.json: custom agents) and the self-managed one (ghes-3.19.json:
// grants and authorizations) for the operations the hosted one lacks;
// and those with the GraphQL endpoint against the platform's GraphQL
// schema (graphql.go).
type Validator struct {
	docs     []*description
	webhooks *description // the hosted description's webhook schemas
	// serverWebhooks are the self-managed description's webhook schemas,
	// for the events only it describes (user: its global webhooks').
	serverWebhooks   *description
	graphQL          *graphQLSchema // nil: GraphQL exchanges are skipped
	validated        atomic.Int64
	skipped          atomic.Int64
	graphQLValidated atomic.Int64 // of validated
}

// validator is the test binary's Validator (nil when validation is off),
// shared by every test: the descriptions are loaded once per binary.
var (
	validatorOnce sync.Once
	validator     *Validator
)

// SharedValidator returns the test binary's Validator, or nil when the
// descriptions are not available or the binary runs under the race
// detector (validation off).
//
// Validation runs once, in the suite without the race detector (CI's
// first run, on SQLite), where every exchange of the end-to-end tests is
// checked: the shape of a response does not depend on the detector, and
// loading a description under it takes tens of seconds of CPU in each
// test binary, a third of the race run on PostgreSQL.
func SharedValidator() *Validator {
	validatorOnce.Do(func() {
		dir := openAPIDir()
		if dir == "" || raceDetector {
			return
		}
		validator = NewValidator(dir, graphQLSchemaFile())
	})
	return validator
}

// Preload reads the hosted description's index now (making its split
// copy when the cache has none), so no later check pays for it; an error
// is reported by the first check.
func (v *Validator) Preload() { _ = v.docs[0].open() }

// openAPIDir returns the descriptions' folder: OpenAPIDirEnv, else the
// package installed under testdata/node, else "".
func openAPIDir() string {
	if dir := os.Getenv(OpenAPIDirEnv); dir != "" {
		return dir
	}
	dir := testdataDir("node", "node_modules", "@octokit", "openapi", "generated")
	if _, err := os.Stat(filepath.Join(dir, "api.github.com.json")); dir == "" || err != nil {
		return ""
	}
	return dir
}

// textMedia are the platform's media types whose bodies are text (a
// diff, a patch, a commit's SHA, rendered Markdown, GET /octocat's art): the validator reads them as plain text,
// as kin-openapi does text/plain.
var textMedia = []string{"application/vnd.github.diff", "application/vnd.github.patch", "application/vnd.github.sha", "text/html",
	"application/octocat-stream"}

// NewValidator returns a Validator over the descriptions in dir and the
// GraphQL schema in graphQLFile ("": GraphQL exchanges are skipped).
func NewValidator(dir, graphQLFile string) *Validator {
	for _, mt := range textMedia {
		openapi3filter.RegisterBodyDecoder(mt, openapi3filter.PlainBodyDecoder)
	}
	v := &Validator{}
	for _, name := range []string{"api.github.com.json", "ghec.json", "ghes-3.19.json"} {
		v.docs = append(v.docs, &description{file: filepath.Join(dir, name), part: operationsPart})
	}
	v.webhooks = &description{file: v.docs[0].file, part: webhooksPart}
	v.serverWebhooks = &description{file: v.docs[2].file, part: webhooksPart}
	if graphQLFile != "" {
		v.graphQL = &graphQLSchema{file: graphQLFile}
	}
	return v
}

// Counts returns how many exchanges were validated and how many skipped
// (requests to forgeapi's paths that no description has, listed in
// undescribedPaths with their reasons: git, health, docs, downloads; and
// GraphQL exchanges without the GraphQL schema).
func (v *Validator) Counts() (validated, skipped int64) { return v.validated.Load(), v.skipped.Load() }

// GraphQLCount returns how many of the validated exchanges were with the
// GraphQL endpoint.
func (v *Validator) GraphQLCount() int64 { return v.graphQLValidated.Load() }

// Check validates one exchange: req was sent, and the response had the
// status, header and body. It returns nil for a valid exchange, or for
// one on a path that undescribedPaths lists (skipped), and otherwise the
// mismatch. A request that no description's operation has is a mismatch,
// except a path that no operation has at all answered with the
// platform's JSON 404 (what the platform answers for a path it does not
// serve). An exchange with the GraphQL endpoint is checked against the
// GraphQL schema instead (checkGraphQL), its query read again from the
// request through GetBody.
func (v *Validator) Check(req *http.Request, status int, header http.Header, body []byte) error {
	if status == http.StatusInternalServerError && req.Context().Value(injectedFaultKey{}) != nil {
		v.skipped.Add(1)
		return nil
	}
	if isGraphQL(req) {
		return v.checkGraphQL(req, status, header, body)
	}
	if req.Method == http.MethodHead {
		// HEAD is the GET without its body (gh asks HEAD .../releases/tags/{tag}
		// before it creates a release): nothing of it to validate when the
		// description has the GET.
		get := req.Clone(req.Context())
		get.Method = http.MethodGet
		if route, _, _, err := v.route(get); err == nil && route != nil {
			v.skipped.Add(1)
			return nil
		}
	}
	route, params, file, err := v.route(req)
	if err != nil {
		return err
	}
	if route == nil {
		if undescribed(req.URL.Path) != "" || webPage(req, header) {
			v.skipped.Add(1)
			return nil
		}
		v.validated.Add(1)
		if err := unknownOperation(req, status, body); err != nil {
			return fmt.Errorf("%s %s -> %d%s: %w", req.Method, req.URL.Path, status, quotedMessage(status, body), err)
		}
		return nil
	}
	v.validated.Add(1)
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{Request: req, PathParams: params, Route: route},
		Status:                 status,
		Header:                 responseHeader(route, req, status, header),
		Body:                   io.NopCloser(bytes.NewReader(body)),
		Options:                &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	err = openapi3filter.ValidateResponse(context.Background(), in)
	if err = remainingError(route, req, body, err); err != nil {
		return fmt.Errorf("%s %s -> %d%s does not match %s (%s %s in %s): %s", req.Method, req.URL.Path, status,
			quotedMessage(status, body), route.Operation.OperationID, route.Method, route.Path, filepath.Base(file), shorten(err.Error()))
	}
	return nil
}

// injectedFaultKey marks the context of a request that a test makes fail
// inside the server on purpose.
type injectedFaultKey struct{}

// InjectedFault returns ctx marked for a request that the test makes fail
// inside the server on purpose (a Recorder that refuses events): its 500
// is forgeapi's answer to the fault the test injected, which no
// description can have, so that response is skipped rather than
// validated. Every other status of such a request is validated as usual;
// a 500 of an unmarked request always fails.
func InjectedFault(ctx context.Context) context.Context {
	return context.WithValue(ctx, injectedFaultKey{}, true)
}

// errUnknownPath is the mismatch of a request to a path that no
// description has, answered with anything but the platform's JSON 404.
var errUnknownPath = errors.New("no operation of the descriptions has this method and path, and the response is not the platform's JSON 404 for what it does not serve " +
	"(list a path forgeapi serves beyond the platform's API in undescribedPaths, with its reason)")

// unknownOperation checks the response to a request that no description's
// operation has (no path, or not that method): it must be the platform's
// JSON 404, its answer to what it does not serve. Anything else is an
// operation forgeapi serves that the platform does not describe.
func unknownOperation(req *http.Request, status int, body []byte) error {
	if status == http.StatusNotFound && isErrorBody(body) {
		return nil
	}
	return errUnknownPath
}

// route finds the operation of the request in the first description that
// has it, its path mapped from the spec's names to the platform's, and
// names that description's file; nil when none has it. A parameter that
// the platform reads as the rest of the path (restParams: a file path, a
// reference or branch name, a basehead) may hold slashes, which the
// descriptions' router does not match: the path is tried again with its
// tail as one segment.
func (v *Validator) route(req *http.Request) (*routers.Route, map[string]string, string, error) {
	p := platformPath(req.URL.Path)
	route, params, file, err := v.find(req, p)
	if route != nil || err != nil {
		return route, params, file, err
	}
	if escaped := req.URL.EscapedPath(); strings.Contains(escaped, "%2F") || strings.Contains(escaped, "%2f") {
		// An escaped "/" stays inside its segment, as the server's mux
		// reads it: "/statuses/a%2Fb" is the sha "a/b".
		if route, params, file, err := v.find(req, platformPath(escaped)); route != nil || err != nil {
			return route, params, file, err
		}
	}
	segs := strings.Split(p, "/")
	for i := len(segs) - 1; i >= 2; i-- {
		route, params, file, err := v.find(req, strings.Join(segs[:i], "/")+"/_")
		if err != nil {
			return nil, nil, "", err
		}
		if route == nil {
			continue
		}
		last := route.Path[strings.LastIndex(route.Path, "/")+1:]
		if name, ok := strings.CutPrefix(last, "{"); ok && restParams[strings.TrimSuffix(name, "}")] {
			params[strings.TrimSuffix(name, "}")] = strings.Join(segs[i:], "/")
			return route, params, file, nil
		}
	}
	return nil, nil, "", nil
}

// restParams are the path parameters that the platform reads as the rest
// of the path, slashes included (tree_sha: a branch or tag name such as
// "feature/x").
var restParams = map[string]bool{"path": true, "ref": true, "branch": true, "basehead": true, "tag": true, "tree_sha": true}

// find looks the request up with the path p in each description in turn.
func (v *Validator) find(req *http.Request, p string) (*routers.Route, map[string]string, string, error) {
	mapped := req.Clone(req.Context())
	mapped.URL.Path = p
	mapped.URL.RawPath = ""
	for _, d := range v.docs {
		route, params, err := d.findRoute(mapped)
		if err != nil || route != nil {
			return route, params, d.file, err
		}
	}
	return nil, nil, "", nil
}

// platformPath maps the spec's path names to the platform's: the API
// under /api/v3 is the same API, uploads under /api/uploads are the
// platform's uploads host, and the assistant product is copilot.
func platformPath(p string) string {
	p = strings.TrimPrefix(p, "/api/v3")
	if rest, ok := strings.CutPrefix(p, "/api/uploads/"); ok {
		p = "/" + rest // the self-managed edition's upload host: the asset upload
	}
	if p == "" {
		p = "/"
	}
	return strings.Replace(p, "/assistant/", "/copilot/", 1)
}

// platformHeader returns the header with the spec's names read as the
// platform's: X-Service-* as X-GitHub-*, and the spec's media type as
// application/json.
func platformHeader(h http.Header) http.Header {
	out := make(http.Header, len(h))
	for k, vs := range h {
		if rest, ok := strings.CutPrefix(k, "X-Service-"); ok {
			k = "X-Github-" + rest
		}
		out[k] = vs
	}
	if ct := out.Get("Content-Type"); strings.HasPrefix(ct, "application/vnd.service") || strings.HasPrefix(ct, "application/vnd.github") {
		if strings.Contains(ct, "json") {
			out.Set("Content-Type", "application/json")
		}
	}
	return out
}

// responseHeader is the response's header read as the platform's
// (platformHeader); for a request that asked for a vendor media type
// (star, ...) that the operation describes as a content type of its own,
// the body is validated as that content.
func responseHeader(route *routers.Route, req *http.Request, status int, header http.Header) http.Header {
	h := platformHeader(header)
	param := httpapi.MediaParam(req)
	if param == "" || route.Operation.Responses == nil {
		return h
	}
	resp := route.Operation.Responses.Status(status)
	if resp == nil || resp.Value == nil {
		return h
	}
	if ct := "application/vnd.github.v3." + param + "+json"; resp.Value.Content.Get(ct) != nil {
		h.Set("Content-Type", ct)
	}
	return h
}

// quotedMessage is the error message of an error response, quoted after
// a space, for a mismatch's report; "" for other responses.
func quotedMessage(status int, body []byte) string {
	if m := errorMessage(body); status >= 400 && m != "" {
		return fmt.Sprintf(" %q", m)
	}
	return ""
}

// shorten keeps a validation error readable in a test log.
func shorten(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > 1500 {
		return s[:1500] + "..."
	}
	return s
}

// validatingTransport validates every response of its base transport
// against the descriptions and reports mismatches to the test.
type validatingTransport struct {
	base http.RoundTripper
	v    *Validator
	t    testing.TB
}

// RoundTrip sends the request and validates the response, whose body it
// reads and puts back for the caller. A GraphQL request's body is kept
// for the validation, which reads its query.
func (vt *validatingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if isGraphQL(req) {
		var err error
		if req, err = rereadable(req); err != nil {
			return nil, err
		}
	}
	resp, err := vt.base.RoundTrip(req)
	if err != nil || resp == nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if err := vt.v.Check(req, resp.StatusCode, resp.Header, body); err != nil {
		vt.t.Errorf("%s: %v", validation(req), err)
	}
	return resp, nil
}

// validation names what an exchange is validated against, in the
// test's report of a mismatch.
func validation(req *http.Request) string {
	if isGraphQL(req) {
		return "GraphQL"
	}
	return "OpenAPI"
}

// Transport returns base (http.DefaultTransport when nil) wrapped so that
// every response is validated for the test, or base itself when
// validation is off.
func Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	v := SharedValidator()
	if v == nil {
		return base
	}
	return &validatingTransport{base: base, v: v, t: t}
}

// CountValidated appends the binary's counts so far to the file
// ValidatedCountEnv names (nothing when it is unset or validation is
// off); every test server does as it stops.
func CountValidated() {
	file := os.Getenv(ValidatedCountEnv)
	v := SharedValidator()
	if file == "" || v == nil {
		return
	}
	f, err := os.OpenFile(file, os.O_APPEND|os.O_CREATE|os.O_WRONLY, 0o644)
	if err != nil {
		return
	}
	defer f.Close()
	validated, skipped := v.Counts()
	fmt.Fprintf(f, "%d %s %d %d %d\n", os.Getpid(), filepath.Base(os.Args[0]), validated, skipped, v.GraphQLCount())
}
