// Package apptest starts the real forgeapi program for end-to-end tests:
// on 127.0.0.1:0, with a temporary data directory, on SQLite, or on
// PostgreSQL (a fresh schema per test) when FORGEAPI_TEST_POSTGRES_URL is
// set. Small builders create users, organizations, repositories and
// tokens with defaults; clients are google/go-github. Every response its
// clients receive is validated against the platform's OpenAPI
// descriptions, and every GraphQL response against the platform's
// GraphQL schema, when they are installed (openapi.go, graphql.go).
package apptest

import (
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/hex"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/google/go-github/v92/github"
	_ "github.com/jackc/pgx/v5/stdlib" // the "pgx" driver, for schema set-up
	"golang.org/x/crypto/bcrypt"

	"forgeapi/internal/accounts"
	"forgeapi/internal/app"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/githost"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/store/storetest"
	"forgeapi/internal/webhooks"
)

// PostgresURLEnv names the environment variable with the PostgreSQL URL
// the suite runs against; unset, it runs on SQLite.
const PostgresURLEnv = "FORGEAPI_TEST_POSTGRES_URL"

// Env is one running server with its own data.
type Env struct {
	T       testing.TB
	Main    *app.Main
	App     *app.App
	URL     string // http://127.0.0.1:PORT (https:// with WithTLS)
	DataDir string
	Config  app.Config
	// base is the transport under the validation: the default one, or
	// one that trusts the server's local CA (WithTLS).
	base http.RoundTripper
}

// Option changes the configuration before the server starts.
type Option func(*app.Config)

// WithRateLimit turns rate limiting on.
func WithRateLimit() Option { return func(c *app.Config) { c.RateLimit = true } }

// WithClock sets the server's clock.
func WithClock(now func() time.Time) Option { return func(c *app.Config) { c.Now = now } }

// WithEventSink subscribes a sink to the server's events at start.
func WithEventSink(s events.Sink) Option {
	return func(c *app.Config) { c.EventSinks = append(c.EventSinks, s) }
}

// WithImmediatePushRecovery lets the push recovery take push_log rows
// at once (no grace period); it runs at start and then only when the test
// calls RunOnce.
func WithImmediatePushRecovery(c *app.Config) {
	c.PushRecovery = githost.RecoveryConfig{Grace: -1, PollInterval: time.Hour}
}

// WithPushCheck runs c before every push (git's and the server's own),
// after the built-in checks.
func WithPushCheck(c githost.PushCheck) Option {
	return func(cfg *app.Config) { cfg.PushChecks = append(cfg.PushChecks, c) }
}

// WithWebhooks sets the webhook delivery configuration (tests that run
// receivers on 127.0.0.1 allow "loopback").
func WithWebhooks(w webhooks.Config) Option { return func(c *app.Config) { c.Webhooks = w } }

// WithTLS serves HTTPS with a certificate of forgeapi's local CA
// (--tls self-signed); the Env's clients trust the CA (Main.CAFile).
func WithTLS() Option { return func(c *app.Config) { c.TLS = app.TLSSelfSigned } }

// WithMetrics serves the Prometheus metrics on a port of their own
// (Env.Main.MetricsURL()); the API port never serves them.
func WithMetrics() Option { return func(c *app.Config) { c.MetricsAddr = "127.0.0.1:0" } }

// WithSSH serves git over SSH on a port of its own (Env.Main.SSHAddr()).
func WithSSH() Option { return func(c *app.Config) { c.SSHAddr = "127.0.0.1:0" } }

// Start starts a server for the test and stops it when the test ends.
func Start(t testing.TB, opts ...Option) *Env {
	t.Helper()
	cfg := testConfig(t)
	cfg.DatabaseURL = DatabaseURL(t)
	for _, o := range opts {
		o(&cfg)
	}
	if cfg.DatabaseURL == "" {
		if err := storetest.SeedSQLite(cfg.DataDir); err != nil {
			t.Fatalf("seed the database: %v", err)
		}
	}
	return StartConfig(t, cfg)
}

// testConfig is a test server's configuration but for its database:
// a port of its own, a temporary data directory, its warnings and errors
// in the test's log (TestLogger).
func testConfig(t testing.TB) app.Config {
	cfg := app.Config{
		Addr:    "127.0.0.1:0",
		DataDir: t.TempDir(),
		Logger:  TestLogger(t),
		// Lookups stay cached for the whole test unless a write drops
		// them: every test that changes a token or an account and checks
		// the effect at once checks the caches' invalidation too.
		LookupCacheTTL: time.Hour,
	}
	return cfg
}

// StartConfig starts a server with a complete configuration (a restart
// test reuses the DataDir and DatabaseURL of an earlier Env).
func StartConfig(t testing.TB, cfg app.Config) *Env {
	t.Helper()
	if v := SharedValidator(); v != nil {
		// Loaded here, before any server runs: loading takes seconds
		// (tens under -race on a busy machine), and a test receiver that
		// validated the first webhook it got would otherwise load it
		// inside the delivery, past the sender's 10-second timeout.
		v.Preload()
	}
	m, err := app.Start(context.Background(), cfg)
	if err != nil {
		t.Fatalf("start forgeapi: %v", err)
	}
	if _, bench := t.(*testing.B); !bench {
		// A benchmark measures the server as it runs: without the
		// check's stack reads. The tests cover the same paths with it.
		m.App.DB.CheckNesting()
	}
	e := &Env{T: t, Main: m, App: m.App, URL: m.URL(), DataDir: cfg.DataDir, Config: cfg, base: http.DefaultTransport}
	if ca := m.CAFile(); ca != "" {
		e.base = TrustingTransport(t, ca)
	}
	t.Cleanup(func() {
		_ = m.Close()
		CountValidated()
		for _, v := range m.App.DB.Violations() {
			t.Errorf("%s", v)
		}
	})
	return e
}

// Stop shuts the server down now (Close is idempotent).
func (e *Env) Stop() {
	if err := e.Main.Close(); err != nil {
		e.T.Errorf("stop forgeapi: %v", err)
	}
}

// Postgres reports whether the suite runs on PostgreSQL.
func Postgres() bool { return os.Getenv(PostgresURLEnv) != "" }

func randomHex(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Unique returns a login-safe name with the prefix, unique in the test.
func Unique(prefix string) string { return prefix + "-" + randomHex(3) }

// UserOpts are the optional fields of a user.
type UserOpts struct {
	Password   string
	TOTPSecret string
	SiteAdmin  bool
	Email      string
}

// User creates a user.
func (e *Env) User(login string, opts ...UserOpts) *accounts.Account {
	e.T.Helper()
	var o UserOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	sealedTOTP, err := auth.SealTOTPSecret(e.App.Secrets, o.TOTPSecret)
	if err != nil {
		e.T.Fatalf("create user %s: %v", login, err)
	}
	n := accounts.NewAccount{Type: accounts.TypeUser, Login: login, Email: o.Email, SealedTOTPSecret: sealedTOTP, SiteAdmin: o.SiteAdmin}
	if o.Password != "" {
		h, err := auth.HashPasswordCost(o.Password, bcrypt.MinCost) // cheap to make; checked like any hash
		if err != nil {
			e.T.Fatal(err)
		}
		n.PasswordHash = h
	}
	u, err := accounts.Create(context.Background(), e.App.DB, n)
	if err != nil {
		e.T.Fatalf("create user %s: %v", login, err)
	}
	return u
}

// Org creates an organization owned by owner, with members.
func (e *Env) Org(login string, owner *accounts.Account, members ...*accounts.Account) *accounts.Account {
	e.T.Helper()
	ctx := context.Background()
	o, err := accounts.Create(ctx, e.App.DB, accounts.NewAccount{Type: accounts.TypeOrg, Login: login})
	if err != nil {
		e.T.Fatalf("create org %s: %v", login, err)
	}
	e.must(accounts.SetMember(ctx, e.App.DB, o.ID, owner.ID, accounts.RoleOwner))
	for _, m := range members {
		e.must(accounts.SetMember(ctx, e.App.DB, o.ID, m.ID, accounts.RoleMember))
	}
	return o
}

// RepoOpts are the optional fields of a repository.
type RepoOpts struct {
	Private          bool
	DefaultBranch    string
	AdvancedSecurity bool
	ForkOf           *repos.Repository
	Description      string
	// DefaultLabels gives the repository the platform's default labels,
	// as the API's creations do; fixtures start without labels.
	DefaultLabels bool
}

// Repo creates a repository (with its empty bare git repository).
func (e *Env) Repo(owner *accounts.Account, name string, opts ...RepoOpts) *repos.Repository {
	e.T.Helper()
	var o RepoOpts
	if len(opts) > 0 {
		o = opts[0]
	}
	n := repos.NewRepository{Owner: owner, Name: name, Private: o.Private, DefaultBranch: o.DefaultBranch,
		AdvancedSecurity: o.AdvancedSecurity, Description: o.Description, NoDefaultLabels: !o.DefaultLabels}
	if o.ForkOf != nil {
		n.ForkOfID = o.ForkOf.ID
	}
	r, err := e.App.Repos.Create(context.Background(), n, owner)
	if err != nil {
		e.T.Fatalf("create repo %s/%s: %v", owner.Login, name, err)
	}
	return r
}

// Token creates a classic personal access token with the scopes.
func (e *Env) Token(user *accounts.Account, scopes ...string) string {
	return e.createToken(auth.TokenSpec{Kind: auth.KindClassic, UserID: user.ID, Scopes: scopes})
}

// OAuthToken creates an OAuth token of user held by the OAuth app with
// the scopes.
func (e *Env) OAuthToken(user *accounts.Account, appID int64, scopes ...string) string {
	return e.createToken(auth.TokenSpec{Kind: auth.KindOAuth, UserID: user.ID, AppID: appID, Scopes: scopes})
}

// OAuthApp registers an OAuth app owned by owner and returns its id.
func (e *Env) OAuthApp(owner *accounts.Account, name string) int64 {
	e.T.Helper()
	a, err := accounts.CreateApp(context.Background(), e.App.DB, owner.ID, name, "https://"+strings.ToLower(name)+".example")
	e.must(err)
	return a.ID
}

// FineGrainedToken creates a fine-grained PAT of user on resourceOwner
// selecting the repositories (nil: none; use AllRepos for all) with the
// permissions "name:level,...".
func (e *Env) FineGrainedToken(user, resourceOwner *accounts.Account, selected []*repos.Repository, permissions string) string {
	spec := auth.TokenSpec{Kind: auth.KindFineGrained, UserID: user.ID, ResourceOwnerID: resourceOwner.ID}
	e.selectRepos(&spec, selected, permissions)
	return e.createToken(spec)
}

// AppUserToken creates an app user-to-server token (UAT), shaped like a
// fine-grained PAT.
func (e *Env) AppUserToken(user, resourceOwner *accounts.Account, selected []*repos.Repository, permissions string) string {
	spec := auth.TokenSpec{Kind: auth.KindAppUser, UserID: user.ID, ResourceOwnerID: resourceOwner.ID}
	e.selectRepos(&spec, selected, permissions)
	return e.createToken(spec)
}

// InstallationToken creates an app installation token on the
// organization, acting as the bot "forgeapi-app[bot]".
func (e *Env) InstallationToken(org *accounts.Account, selected []*repos.Repository, permissions string) string {
	e.T.Helper()
	ctx := context.Background()
	bot, err := accounts.ByLogin(ctx, e.App.DB, "forgeapi-app[bot]")
	if err != nil {
		bot, err = accounts.Create(ctx, e.App.DB, accounts.NewAccount{Type: accounts.TypeBot, Login: "forgeapi-app[bot]"})
		e.must(err)
	}
	spec := auth.TokenSpec{Kind: auth.KindInstallation, UserID: bot.ID, ResourceOwnerID: org.ID}
	e.selectRepos(&spec, selected, permissions)
	return e.createToken(spec)
}

// AllRepos selects every repository of the resource owner.
var AllRepos = []*repos.Repository{nil}

func (e *Env) selectRepos(spec *auth.TokenSpec, selected []*repos.Repository, permissions string) {
	e.T.Helper()
	for _, r := range selected {
		if r == nil {
			spec.AllRepositories = true
			continue
		}
		spec.RepositoryIDs = append(spec.RepositoryIDs, r.ID)
	}
	g, err := auth.ParseGrant(permissions)
	if err != nil {
		e.T.Fatalf("permissions %q: %v", permissions, err)
	}
	spec.Grant = g
}

func (e *Env) createToken(spec auth.TokenSpec) string {
	e.T.Helper()
	t, err := auth.CreateToken(context.Background(), e.App.DB, spec)
	if err != nil {
		e.T.Fatalf("create token: %v", err)
	}
	return t.Value
}

func (e *Env) must(err error) {
	e.T.Helper()
	if err != nil {
		e.T.Fatal(err)
	}
}

// Client returns a go-github client sending the token (anonymous when
// token is ""). The client's own rate-limit bookkeeping is off, so tests
// see the server's answers.
func (e *Env) Client(token string) *github.Client {
	opts := []github.ClientOptionsFunc{github.WithTransport(e.Transport())}
	if token != "" {
		opts = append(opts, github.WithAuthToken(token))
	}
	return e.newClient(opts...)
}

// BasicClient returns a go-github client using HTTP Basic with login and
// password, sending otp (when not empty) in the OTP header.
func (e *Env) BasicClient(login, password, otp string) *github.Client {
	tr := &github.BasicAuthTransport{Username: login, Password: password, OTP: otp, Transport: e.Transport()}
	return e.newClient(github.WithHTTPClient(tr.Client()))
}

func (e *Env) newClient(opts ...github.ClientOptionsFunc) *github.Client {
	base := e.URL + "/"
	opts = append(opts, github.WithURLs(&base, &base), github.WithDisableRateLimitCheck())
	c, err := github.NewClient(opts...)
	if err != nil {
		e.T.Fatalf("go-github client: %v", err)
	}
	return c
}

// Transport is the HTTP transport of the test's clients: every response
// is validated against the platform's OpenAPI descriptions when they are
// available (see OpenAPIDirEnv), and a mismatch fails the test.
func (e *Env) Transport() http.RoundTripper { return Transport(e.T, e.base) }

// TrustingTransport returns a transport that trusts the PEM certificates
// of caFile (and nothing else).
func TrustingTransport(t testing.TB, caFile string) http.RoundTripper {
	t.Helper()
	pem, err := os.ReadFile(caFile)
	if err != nil {
		t.Fatalf("read CA: %v", err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		t.Fatalf("%s holds no certificate", caFile)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	return tr
}

// HTTPClient returns a plain HTTP client with the test's Transport.
func (e *Env) HTTPClient() *http.Client { return &http.Client{Transport: e.Transport()} }

// Do sends a raw request with the token (may be "") and returns the
// response with its body read into the returned bytes.
func (e *Env) Do(method, path, token string, body io.Reader, headers ...string) (*http.Response, []byte) {
	e.T.Helper()
	req, err := http.NewRequest(method, e.URL+path, body)
	if err != nil {
		e.T.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := e.HTTPClient().Do(req)
	if err != nil {
		e.T.Fatalf("%s %s: %v", method, path, err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		e.T.Fatal(err)
	}
	return resp, b
}

// DoJSON is Do with a JSON string body.
func (e *Env) DoJSON(method, path, token, body string, headers ...string) (*http.Response, []byte) {
	e.T.Helper()
	return e.Do(method, path, token, strings.NewReader(body), append(headers, "Content-Type", "application/json")...)
}

// ResponseStatus returns the status code of a go-github call's response,
// or 0 when there was none; handy as `apptest.ResponseStatus(resp)`.
func ResponseStatus(resp *github.Response) int {
	if resp == nil {
		return 0
	}
	return resp.StatusCode
}

// Ctx is the context tests use for client calls.
func Ctx() context.Context { return context.Background() }

// Must fails the test on a non-nil error, naming what was done.
func Must(t testing.TB, what string, err error) {
	t.Helper()
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

// Q returns the store handle, for tests that check rows directly.
func (e *Env) Q() store.Q { return e.App.DB }

// QueryPlan returns the plan of the query, one line per step (tests of
// which index a query uses): the detail column of SQLite's EXPLAIN QUERY
// PLAN, or the lines of PostgreSQL's EXPLAIN.
func (e *Env) QueryPlan(t testing.TB, query string, args ...any) []string {
	t.Helper()
	if e.App.DB.Dialect == store.Postgres {
		return e.postgresPlan(t, query, args...)
	}
	rows, err := e.Q().QueryContext(e.Context(), "EXPLAIN QUERY PLAN "+query, args...)
	Must(t, "query plan", err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var id, parent, unused int64
		var detail string
		Must(t, "plan row", rows.Scan(&id, &parent, &unused, &detail))
		plan = append(plan, detail)
	}
	Must(t, "plan rows", rows.Err())
	return plan
}

// postgresPlan is QueryPlan on PostgreSQL.
func (e *Env) postgresPlan(t testing.TB, query string, args ...any) []string {
	t.Helper()
	rows, err := e.Q().QueryContext(e.Context(), "EXPLAIN "+query, args...)
	Must(t, "query plan", err)
	defer rows.Close()
	var plan []string
	for rows.Next() {
		var line string
		Must(t, "plan line", rows.Scan(&line))
		plan = append(plan, line)
	}
	Must(t, "plan rows", rows.Err())
	return plan
}

// Step runs one step of a story test as a named subtest and stops the
// story when the step failed: later steps build on what it left, so they
// would only fail again, further from the cause.
func Step(t *testing.T, name string, run func(t *testing.T)) {
	t.Helper()
	if !t.Run(name, run) {
		t.FailNow()
	}
}

// OnceWithoutRace skips t under the race detector: t tests what an
// outside client or reader sees (gh, octokit.js, a browser, the README's
// quick start), which does not depend on the detector, so it runs once,
// in the suite without it (CI's run on SQLite, which also checks every
// exchange against the platform's description). The server code those
// clients reach runs under the detector in each area's own tests. GH,
// NodeModules and the browser tests' tabs call it, so a client's test
// needs no call of its own.
func OnceWithoutRace(t testing.TB) {
	t.Helper()
	if raceDetector {
		t.Skip("a client's view of the server runs once, in the suite without -race (apptest.OnceWithoutRace)")
	}
}

// SkipJobsUnderRace skips a test that runs Actions jobs on the host when
// the binary runs under the race detector: act v0.2.89's host executor
// races on its pty writer (host_environment.go:342), in act's code. CI
// runs those tests without -race on PostgreSQL (.ci/run).
func SkipJobsUnderRace(t testing.TB) {
	t.Helper()
	if raceDetector {
		t.Skip("act v0.2.89's host executor races on its pty writer (host_environment.go:342)")
	}
}
