// Package app wires forgeapi together: configuration, the store, every
// API area's services and routes, the HTTP server and the background
// workers. Main is the running program; tests start it on 127.0.0.1:0
// with a temporary data directory and talk to it over HTTP.
package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"sync"
	"time"

	"forgeapi/docs"
	"forgeapi/internal/access"
	"forgeapi/internal/accounts"
	"forgeapi/internal/actions"
	"forgeapi/internal/actions/settings"
	"forgeapi/internal/activity"
	"forgeapi/internal/agents"
	"forgeapi/internal/apps"
	"forgeapi/internal/archives"
	"forgeapi/internal/artifacts"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/auth"
	"forgeapi/internal/backup"
	"forgeapi/internal/blob"
	"forgeapi/internal/blocks"
	"forgeapi/internal/checks"
	"forgeapi/internal/codescanning"
	"forgeapi/internal/codesearch"
	"forgeapi/internal/collaborators"
	"forgeapi/internal/commitcomments"
	"forgeapi/internal/console"
	"forgeapi/internal/customprops"
	"forgeapi/internal/dependabot"
	"forgeapi/internal/deployments"
	"forgeapi/internal/depreview/advisorydb"
	depreviewapi "forgeapi/internal/depreview/api"
	"forgeapi/internal/dispatches"
	"forgeapi/internal/docsite"
	"forgeapi/internal/events"
	"forgeapi/internal/feeds"
	"forgeapi/internal/gists"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/git/gitwrite"
	"forgeapi/internal/gitdata"
	"forgeapi/internal/githost"
	"forgeapi/internal/graphql"
	"forgeapi/internal/httpapi"
	"forgeapi/internal/issues"
	"forgeapi/internal/keys"
	"forgeapi/internal/licenses"
	markdownapi "forgeapi/internal/markdown/api"
	"forgeapi/internal/merges"
	"forgeapi/internal/notifications"
	"forgeapi/internal/oauth"
	"forgeapi/internal/oauthweb"
	"forgeapi/internal/orgmigration"
	"forgeapi/internal/orgroles"
	"forgeapi/internal/orgs"
	"forgeapi/internal/prereceive"
	"forgeapi/internal/protection"
	"forgeapi/internal/pulls"
	"forgeapi/internal/reactions"
	"forgeapi/internal/reference"
	"forgeapi/internal/releases"
	"forgeapi/internal/repocontent"
	"forgeapi/internal/repos"
	"forgeapi/internal/reposettings"
	"forgeapi/internal/repostats"
	"forgeapi/internal/rulesets"
	"forgeapi/internal/secretbox"
	"forgeapi/internal/secretscanning"
	"forgeapi/internal/siteadmin"
	"forgeapi/internal/statuses"
	"forgeapi/internal/store"
	"forgeapi/internal/teams"
	"forgeapi/internal/web"
	"forgeapi/internal/webhooks"
	"forgeapi/internal/worker"
)

// Config is the server's configuration. The zero value of each field
// means its documented default.
type Config struct {
	Addr string // listen address; default 127.0.0.1:8080
	// TLS is "" (plain HTTP, unless TLSCertFile and TLSKeyFile are set) or
	// TLSSelfSigned: HTTPS with a certificate of a local CA made under
	// DataDir/tls, whose file CAFile names.
	TLS string
	// TLSCertFile and TLSKeyFile are a PEM certificate (chain) and key to
	// serve HTTPS with.
	TLSCertFile, TLSKeyFile string
	DataDir                 string // data directory; default ./forgeapi-data
	DatabaseURL             string // empty: SQLite at DataDir/forgeapi.db; postgres://... for PostgreSQL
	BaseURL                 string // public URL in url fields; default http://ADDR (the address actually bound)
	// MetricsAddr is the listen address of GET /metrics (Prometheus);
	// empty serves no metrics. The API port never serves them.
	MetricsAddr string
	RateLimit   bool // enforce the rate limits
	// SSHAddr is the listen address of git over SSH; empty serves none.
	// The host key is made at first start under DataDir/ssh.
	SSHAddr string
	// LoginLimits bound failed password and one-time-password attempts
	// per account and client address (see auth.LoginLimits; the zero
	// value is the defaults: 10 per address, 100 per account, an hour).
	LoginLimits auth.LoginLimits
	// Logger receives the server's log, and one line per request at
	// info level (the access log).
	Logger     *slog.Logger
	Now        func() time.Time // clock; default time.Now
	Feeds      feeds.Config     // feed window, limits, retention and poll interval
	EventSinks []events.Sink    // extra sinks subscribed at start (tests record events with them)
	// PushChecks are extra checks run before every push, git's and the
	// server's own, after the built-in ones (tests move references with
	// them while a change is under way).
	PushChecks []githost.PushCheck
	// ManifestCache bounds dependency review's cache of parsed manifests,
	// counted in dependencies: 0 means the default (200,000, about 40 MB),
	// a negative value turns the cache off.
	ManifestCache int
	// MaxAssetSize is the largest release asset an upload may send, in
	// bytes: 0 means releases.DefaultMaxAssetSize (2 GiB).
	MaxAssetSize int64
	// ArchiveCacheBytes bounds the cache of built tarballs and zipballs
	// under DataDir/archives, in bytes; 0 means
	// archives.DefaultMaxCacheBytes (2 GiB).
	ArchiveCacheBytes int64
	// BuiltinRunner runs Actions jobs in the server (actions.Runner): the
	// workflows' steps run on the server's host as its user. Off by
	// default.
	BuiltinRunner bool
	// ActionsRunner configures the built-in runner (its defaults: a
	// directory under DataDir, a 30-second lease); its Lease is the
	// registered runners' (forgeapi runner) jobs' lease too.
	ActionsRunner actions.RunnerConfig
	// ActionsCacheLimit is how many bytes of Actions caches a repository
	// keeps (0: 10 GB, the platform's) unless its enterprise's or its own
	// cache usage policy says otherwise: the default of the enterprises'
	// repo_cache_size_limit_in_gb. Over it the least recently used
	// entries are evicted.
	ActionsCacheLimit int64
	// ActionsCacheGB is how many bytes one gigabyte of the Actions cache
	// usage policies counts (0: 1 GiB). Tests make it small.
	ActionsCacheGB int64
	// Blob is the storage of migration archives (see blob.Open): empty
	// for a directory under DataDir, file://PATH, or s3://BUCKET?...
	Blob string
	// BlobOptions are extra options of the blob store (S3 transport and
	// credentials lookup); Dir, BaseURL, SigningKey and Now are filled in.
	BlobOptions blob.Options
	// AuthorizationsAPI is "enabled" (default) or "removed": the state of
	// the deprecated OAuth grants and authorizations API.
	AuthorizationsAPI string
	// OAuthWeb tunes the web application and device flows (the device
	// flow's polling interval).
	OAuthWeb oauthweb.Config
	// Webhooks configures webhook delivery: allowed destinations, timeout,
	// retries, per-hook rate limit, retention and the secret key.
	Webhooks webhooks.Config
	// LookupCacheTTL bounds how long a token's or an account's lookup is
	// cached (see store.ReadCache): changes made through this server, and
	// on PostgreSQL through any server, take effect at once; the bound is
	// for changes by other processes on SQLite (admin commands) and for
	// PostgreSQL notifications lost while reconnecting. 0 means 1 s; a
	// negative value turns the caches off.
	LookupCacheTTL time.Duration
	// PushRecovery configures the worker that records the events of
	// pushes cut short by a crash (grace period, lease, poll interval).
	PushRecovery githost.RecoveryConfig
	// GitMaintenance configures the worker that runs git gc on
	// repositories after enough pushes or time (push threshold, maximum
	// age, lease, poll interval).
	GitMaintenance githost.MaintenanceConfig
	// CodeSearch configures the indexer of code and commit search.
	CodeSearch codesearch.Config
	// OrgDeletion configures the worker that deletes organizations in the
	// background (DELETE /orgs/{org}).
	OrgDeletion orgs.DeleterConfig
	// Git bounds git over HTTP: push size (default 2 GiB), concurrent git
	// processes (default githttp.DefaultMaxProcesses()) and their queue
	// wait. Its Logger and IdleTimeout are filled in; its StateDir
	// defaults to DataDir/git-pushes.
	Git githttp.Config
	// HeaderTimeout bounds the reading of a request's header (slow-loris
	// clients). 0 means DefaultHeaderTimeout.
	HeaderTimeout time.Duration
	// IdleTimeout ends a request whose body read, or whose response write,
	// makes no progress for that long; a transfer that keeps moving may
	// last any time (large pushes and clones). A kept-alive connection is
	// closed when idle for that long or MinKeepAlive, whichever is longer.
	// 0 means DefaultIdleTimeout.
	IdleTimeout time.Duration
	// BodyTimeout is the time the body of an API request (or of a web
	// form) has to arrive, plus a second per httpapi.MinBodyRate bytes
	// received: a client trickling its body is dropped (408), one sending
	// at least that fast never is. Git pushes are bound by IdleTimeout
	// alone. 0 means DefaultBodyTimeout.
	BodyTimeout time.Duration
}

// The defaults of the HTTP server's timeouts.
const (
	DefaultHeaderTimeout = 20 * time.Second
	DefaultIdleTimeout   = 60 * time.Second
	DefaultBodyTimeout   = 30 * time.Second
	// MinKeepAlive is the least time a kept-alive connection stays open
	// while idle: longer than clients keep theirs (Go's transport, which
	// go-github, gh and most bots use, 90 s), so that a client never sends
	// a request on a connection the server is closing, which it sees as
	// EOF and does not retry for a POST or PATCH.
	MinKeepAlive = 2 * time.Minute
)

func (c *Config) setDefaults() {
	if c.Addr == "" {
		c.Addr = "127.0.0.1:8080"
	}
	if c.DataDir == "" {
		c.DataDir = "forgeapi-data"
	}
	if c.Logger == nil {
		c.Logger = slog.Default()
	}
	if c.Now == nil {
		c.Now = time.Now
	}
	if c.AuthorizationsAPI == "" {
		c.AuthorizationsAPI = oauth.APIEnabled
	}
	if c.HeaderTimeout <= 0 {
		c.HeaderTimeout = DefaultHeaderTimeout
	}
	if c.IdleTimeout <= 0 {
		c.IdleTimeout = DefaultIdleTimeout
	}
	if c.BodyTimeout <= 0 {
		c.BodyTimeout = DefaultBodyTimeout
	}
}

// validate reports a configuration value that is not one of its choices.
func (c *Config) validate() error {
	if c.AuthorizationsAPI != oauth.APIEnabled && c.AuthorizationsAPI != oauth.APIRemoved {
		return fmt.Errorf("authorizations API must be %s or %s, not %q", oauth.APIEnabled, oauth.APIRemoved, c.AuthorizationsAPI)
	}
	if c.TLS != "" && c.TLS != TLSSelfSigned {
		return fmt.Errorf("--tls must be %s (or use --tls-cert and --tls-key), not %q", TLSSelfSigned, c.TLS)
	}
	if _, err := webhooks.ReceiverRoots(c.Webhooks.CAFile); err != nil {
		return fmt.Errorf("--webhook-ca-file: %w", err)
	}
	if c.BaseURL != "" {
		if _, err := PublicBaseURL(c.BaseURL); err != nil {
			return fmt.Errorf("--base-url: %w", err)
		}
	}
	return nil
}

// App is forgeapi's services over one store, without the network: the
// admin commands use it directly, Main serves it.
type App struct {
	Config Config
	DB     *store.DB
	Repos  *repos.Service
	Authn  *auth.Authenticator
	// Accounts caches the account lookups of the API guard (nil: off).
	Accounts *accounts.Cache
	Events   *events.Bus
	// Activity holds stars, watches and follows and emits repository events.
	Activity *activity.Service
	// Feeds serves the event feeds.
	Feeds *feeds.Handler
	Git   *githost.Handler
	// WebFlow signs the commits the server writes itself, with the key
	// kept in WebFlowKeyFile (nil in a route table's App).
	WebFlow gitwrite.Signer
	// Gists are the users' gists, each a bare repository under DataDir/gists.
	Gists *gists.Service
	// GistMaintenance runs git gc on the gists that are due, with the
	// periodic runs of GitMaintenance.
	GistMaintenance *gists.Maintainer
	// PushRecovery records the events of pushes whose own recording did
	// not happen (crash, failed transaction); Start runs it.
	PushRecovery *githost.Recoverer
	// GitMaintenance runs git gc on the repositories that are due; Start
	// runs it in the background.
	GitMaintenance *githost.Maintainer
	// Orgs changes memberships; its Deleter, which Start runs, deletes
	// organizations in the background.
	Orgs *orgs.Service
	// Teams changes teams; Orgs.Accepting turns their pending memberships active.
	Teams *teams.Service
	// Agents are the enterprise custom agents; their ruleset check runs
	// before every push.
	Agents *agents.Service
	// Rulesets are the organization rulesets; their check runs before every push.
	Rulesets *rulesets.Service
	// Advisories is the advisory database of dependency review.
	Advisories *advisorydb.Source
	// DepReview serves dependency review; it owns the parsed-manifest cache.
	DepReview *depreviewapi.Handler
	// Migrations are the organization migrations; their blob store is
	// opened by Start, once the base URL is known.
	Migrations *orgmigration.Service
	// OAuth holds the grants and authorizations.
	OAuth *oauth.Service
	// OAuthWeb runs the web application flow and the device flow.
	OAuthWeb *oauthweb.Service
	// Webhooks holds the hooks and their deliveries; it is a sink of every
	// event.
	Webhooks *webhooks.Service
	// Pulls holds the pull requests; its Checker, which Start runs,
	// computes their mergeability in the background.
	Pulls *pulls.Service
	// Issues holds the issues, their comments, labels and milestones.
	Issues *issues.Service
	// Collaborators holds the repositories' collaborators and invitations.
	Collaborators *collaborators.Service
	// Protection holds the branch protections and enforces them.
	Protection *protection.Service
	// PreReceive holds the pre-receive hooks and runs them on every push.
	PreReceive *prereceive.Service
	// Statuses holds the commit statuses.
	Statuses *statuses.Service
	// Checks holds the check suites and runs.
	Checks *checks.Service
	// Actions holds the workflows, runs and jobs; its runner (nil unless
	// Config.BuiltinRunner) runs the jobs.
	Actions       *actions.Service
	ActionsRunner *actions.Runner
	// ActionsScheduler starts the runs of the workflows' schedules.
	ActionsScheduler *actions.Scheduler
	// ActionsArtifactPruner expires the artifacts past their retention.
	ActionsArtifactPruner *actions.ArtifactPruner
	// ActionsCachePruner removes abandoned cache reservations and
	// evicts caches unread for a week.
	ActionsCachePruner *actions.CachePruner
	// Deployments holds deployments, their statuses and environments.
	Deployments *deployments.Service
	// ActionsSettings holds Actions and Dependabot secrets, variables and
	// Actions permissions.
	ActionsSettings *settings.Service
	// CommitComments holds the commit comments.
	CommitComments *commitcomments.Service
	// Releases holds the releases and their assets; their blob store is
	// opened by Start, with the migrations'.
	Releases *releases.Service
	// Keys holds users' SSH keys and repositories' deploy keys.
	Keys *keys.Service
	// Archives serves the repositories' tarballs and zipballs.
	Archives *archives.Handler
	// CodeSearch indexes the default branches' files and commits after
	// pushes; Start runs it in the background.
	CodeSearch *codesearch.Indexer
	// SecretScanning is secret scanning's alerts; SecretScanner scans
	// pushes for secrets.
	SecretScanning *secretscanning.Service
	SecretScanner  *secretscanning.Scanner
	// CodeScanning is code scanning's analyses and alerts; SARIFs
	// processes its uploads.
	CodeScanning *codescanning.Service
	SARIFs       *codescanning.Processor
	// Dependabot is Dependabot alerts; DependabotChecker matches default
	// branches against the advisory database after pushes.
	Dependabot        *dependabot.Service
	DependabotChecker *dependabot.Checker
	// Merges merges branches without a pull request (merges,
	// merge-upstream).
	Merges *merges.Service
	// Apps registers and installs apps and resolves the apps an event
	// reaches (Webhooks.Apps).
	Apps *apps.Service
	// Secrets seals secrets at rest: webhook secrets and passwords, TOTP
	// seeds (auth.SealTOTPSecret).
	Secrets *secretbox.Box

	// accountDetails and repoStanding cache the accounts' details and the
	// repositories with the caller's standing (nil: off, as Accounts).
	accountDetails *accounts.DetailsCache
	repoStanding   *repos.StandingCache
}

// Open opens the store (migrating its schema) and builds the services,
// each once. When it fails part way, what it opened is closed.
func Open(ctx context.Context, cfg Config) (_ *App, err error) {
	cfg.setDefaults()
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if err := backup.CheckRestored(cfg.DataDir); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(cfg.DataDir, 0o755); err != nil {
		return nil, fmt.Errorf("create data directory: %w", err)
	}
	var opened closers
	defer opened.closeOnError(&err)
	db, err := store.Open(ctx, cfg.DatabaseURL, cfg.DataDir)
	if err != nil {
		return nil, err
	}
	opened.add(db.Close)
	a := &App{Config: cfg, DB: db, Events: &events.Bus{Now: cfg.Now}}
	a.OAuth = &oauth.Service{DB: db}
	a.OAuthWeb = &oauthweb.Service{DB: db, OAuth: a.OAuth, Now: cfg.Now, Config: cfg.OAuthWeb}
	a.Activity = &activity.Service{DB: db, Events: a.Events, Now: cfg.Now}
	a.Repos = &repos.Service{DB: db, GitRoot: filepath.Join(cfg.DataDir, "git"),
		AfterCreate: a.Activity.RepositoryCreated, AfterUpdate: a.Activity.RepositoryUpdated,
		BeforeDelete: a.Activity.RepositoryDeleted, AfterFork: func(ctx context.Context, tx *store.Tx, src, fork *repos.Repository, actor *accounts.Account) error {
			if err := licenses.CopyFork(ctx, tx, src.ID, fork.ID); err != nil {
				return err
			}
			return a.Activity.RepositoryForked(ctx, tx, src, fork, actor)
		},
		Filled: func(ctx context.Context, tx *store.Tx, r *repos.Repository, gitDir string) error {
			if r.ForkOfID != 0 {
				return nil // AfterFork copied the source's license
			}
			if err := a.CodeSearch.RequestAfterCommit(ctx, tx, r.ID); err != nil {
				return err
			}
			return licenses.DetectAt(ctx, tx, r.ID, gitDir, "HEAD")
		}}
	a.Feeds = feeds.New(db, cfg.Now, cfg.Feeds)
	a.Events.Subscribe(a.Feeds)
	a.Events.Subscribe(auditlog.Sink{})
	a.Events.Subscribe(teams.Sink{})
	serverKey, err := loadSecretKey(cfg)
	if err == nil {
		a.Secrets, err = secretbox.New(serverKey)
	}
	if err != nil {
		return nil, err
	}
	cloneTokens := auth.NewCloneTokens(serverKey, cfg.Now)
	if _, err := auth.SealPlainTOTPSecrets(ctx, db, a.Secrets); err != nil {
		return nil, err
	}
	a.Webhooks = webhooks.NewService(db, a.Secrets, cfg.Webhooks, cfg.Now, cfg.Logger)
	a.Apps = apps.NewService(db, a.Secrets, a.Events)
	a.Webhooks.Apps = a.Apps
	a.Events.Subscribe(a.Webhooks)
	a.Activity.AfterChange = a.Feeds.Invalidate
	for _, s := range cfg.EventSinks {
		a.Events.Subscribe(s)
	}
	a.Authn = &auth.Authenticator{DB: db, Now: cfg.Now, Limits: cfg.LoginLimits, Secrets: a.Secrets, Clone: cloneTokens, AppKeys: auth.NewAppKeys(db, cfg.LookupCacheTTL)}
	if cfg.LookupCacheTTL >= 0 {
		// Every cache is made here, at start, so that every server
		// watches (and on PostgreSQL notifies the others of) the same
		// tables from its first write.
		a.Authn.Tokens = auth.NewTokenCache(db, cfg.LookupCacheTTL)
		a.Accounts = accounts.NewCache(db, cfg.LookupCacheTTL)
		a.accountDetails = accounts.NewDetailsCache(db, cfg.LookupCacheTTL)
		a.repoStanding = repos.NewStandingCache(db, cfg.LookupCacheTTL)
		a.Repos.StatsCache = repos.NewStatsCache(db, cfg.LookupCacheTTL)
		a.Repos.Accounts = a.Accounts
	}
	gitConfig := cfg.Git
	gitConfig.Logger, gitConfig.IdleTimeout = cfg.Logger, cfg.IdleTimeout
	if gitConfig.StateDir == "" {
		gitConfig.StateDir = filepath.Join(cfg.DataDir, "git-pushes")
	}
	gitServer, err := githttp.NewServer(gitConfig)
	if err != nil {
		return nil, err
	}
	a.Git = &githost.Handler{DB: db, Repos: a.Repos, Authn: a.Authn, Events: a.Events, Git: gitServer, Logger: cfg.Logger}
	webFlow, err := openWebFlow(ctx, cfg, db)
	if err != nil {
		return nil, err
	}
	a.WebFlow, a.Git.WebFlow = webFlow, webFlow
	a.Gists = &gists.Service{DB: db, Root: filepath.Join(cfg.DataDir, "gists"), Now: cfg.Now, Events: a.Events, Sign: webFlow}
	a.Agents = &agents.Service{DB: db, Repos: a.Repos}
	a.Git.AddCheck(a.Agents.CheckPush)
	a.Rulesets = &rulesets.Service{DB: db}
	a.Git.AddCheck(a.Rulesets.CheckPush)
	a.Protection = &protection.Service{DB: db, Events: a.Events}
	a.Git.AddCheck(a.Protection.CheckPush)
	a.Git.AddCheck(reposettings.CheckPush(db))
	a.PreReceive = &prereceive.Service{DB: db, Repos: a.Repos, Logger: cfg.Logger}
	a.Git.AddCheck(a.PreReceive.CheckPush)
	for _, c := range cfg.PushChecks {
		a.Git.AddCheck(c)
	}
	a.Pulls = &pulls.Service{DB: db, Events: a.Events, Repos: a.Repos, Git: a.Git, Protection: a.Protection, Checker: pulls.NewChecker(db, a.Repos, pulls.CheckerConfig{Sign: webFlow}, cfg.Logger)}
	a.Events.Subscribe(pulls.PushSink{Service: a.Pulls})
	a.Git.HandleIntent(pulls.MergeIntent, a.Pulls.RecordMerge)
	a.Git.HandleIntent(protection.BranchRenameIntent, repocontent.RecordRename)
	a.Git.HandleIntent(issues.LinkedBranchIntent, func(ctx context.Context, tx *store.Tx, push *githost.Push, subject string) error {
		return issues.RecordLinkedBranch(ctx, tx, push.Repo.ID, push.Updates[0].Ref, subject)
	})
	a.Events.Subscribe(issues.LinkedBranchSink{})
	a.PushRecovery = githost.NewRecoverer(a.Git, cfg.PushRecovery)
	a.GitMaintenance = githost.NewMaintainer(db, a.Repos, cfg.GitMaintenance, cfg.Logger)
	a.GistMaintenance = gists.NewMaintainer(a.Gists, gists.MaintenanceConfig{PollInterval: cfg.GitMaintenance.PollInterval}, cfg.Logger)
	a.Orgs = &orgs.Service{DB: db, Events: a.Events, Deleter: orgs.NewDeleter(db, a.Repos, cfg.OrgDeletion, cfg.Logger)}
	a.Teams = &teams.Service{DB: db, Events: a.Events, Orgs: a.Orgs}
	a.Orgs.Accepting = a.Teams.Accepting
	a.Repos.AfterUpdate = func(ctx context.Context, tx *store.Tx, before, after *repos.Repository, actor *accounts.Account) error {
		if err := a.Agents.CheckRepositoryUpdate(ctx, tx, before, after, actor); err != nil {
			return err
		}
		if err := a.Rulesets.CheckRepositoryUpdate(ctx, tx, before, after, actor); err != nil {
			return err
		}
		return a.Activity.RepositoryUpdated(ctx, tx, before, after, actor)
	}
	a.Issues = &issues.Service{DB: db, Events: a.Events, PullRequests: a.Pulls}
	// A new repository gets the platform's default labels; a generated
	// one's branches are pushed as the server's.
	a.Repos.DefaultLabels = issues.CreateDefaultLabels
	a.Repos.ServerPush = a.Git.ServerPush
	a.Collaborators = &collaborators.Service{DB: db, Events: a.Events}
	a.Statuses = &statuses.Service{DB: db, Events: a.Events}
	a.Checks = checks.NewService(db, a.Events, a.Apps, a.Repos)
	a.Events.Subscribe(checks.PushSink{Service: a.Checks})
	a.Actions = actions.NewService(db, a.Events, a.Repos)
	if err := a.Actions.EnsureApp(ctx); err != nil { // the github-actions app of the runs' checks
		return nil, err
	}
	a.Actions.Now = cfg.Now
	a.Actions.Lease = cfg.ActionsRunner.Lease // the registered runners' jobs' lease too
	a.Actions.CacheLimit = cfg.ActionsCacheLimit
	a.Actions.CacheGB = cfg.ActionsCacheGB
	a.Actions.CheckEvents = a.Checks // check_run and check_suite of the runs' checks
	a.ActionsScheduler = actions.NewScheduler(a.Actions, actions.SchedulerConfig{}, cfg.Logger)
	a.Events.Subscribe(actions.PushSink{Service: a.Actions})
	if cfg.BuiltinRunner {
		runnerCfg := cfg.ActionsRunner
		if runnerCfg.Dir == "" {
			runnerCfg.Dir = filepath.Join(cfg.DataDir, "actions-jobs")
		}
		if err := os.MkdirAll(runnerCfg.Dir, 0o700); err != nil {
			return nil, err
		}
		a.ActionsRunner = actions.NewRunner(a.Actions, runnerCfg, cfg.Logger)
	}
	a.Events.Subscribe(notifications.Sink{})
	a.Deployments = &deployments.Service{DB: db, Events: a.Events}
	a.ActionsSettings = &settings.Service{DB: db, Box: a.Secrets, Now: cfg.Now}
	a.Actions.Values = a.ActionsSettings            // the jobs' secrets and variables
	a.Actions.Runners = a.ActionsSettings           // registered runners (forgeapi runner) take jobs
	a.Actions.Box = a.Secrets                       // seals the OIDC signing key
	a.Actions.Settings = a.ActionsSettings          // fork pull requests, self-hosted runners' repositories, OIDC subjects
	a.Actions.Policies = a.ActionsSettings          // default GITHUB_TOKEN permissions, retention
	a.Actions.Environments = a.deploymentsHandler() // jobs with environment: deploy through it
	a.Actions.Gates = a.deploymentsHandler()        // and wait for its protection
	a.ActionsArtifactPruner = actions.NewArtifactPruner(a.Actions, 0, cfg.Logger)
	a.ActionsCachePruner = actions.NewCachePruner(a.Actions, 0, cfg.Logger)
	a.Merges = &merges.Service{DB: db, Repos: a.Repos, Git: a.Git}
	a.CommitComments = &commitcomments.Service{DB: db, Events: a.Events}
	a.Releases = newReleases(a, serverKey)
	a.Keys = &keys.Service{DB: db, Events: a.Events}
	a.Events.Subscribe(licenses.PushSink{Repos: a.Repos})
	a.CodeSearch = codesearch.NewIndexer(db, a.Repos, cfg.CodeSearch, cfg.Logger)
	a.Events.Subscribe(a.CodeSearch)
	a.SecretScanning = &secretscanning.Service{DB: db, Events: a.Events, Repos: a.Repos}
	a.SecretScanner = secretscanning.NewScanner(a.SecretScanning, secretscanning.Config{}, cfg.Logger)
	a.Events.Subscribe(a.SecretScanner)
	a.CodeScanning = &codescanning.Service{DB: db, Events: a.Events, Repos: a.Repos}
	a.SARIFs = codescanning.NewProcessor(a.CodeScanning, codescanning.Config{}, cfg.Logger)
	a.Archives = &archives.Handler{Repos: a.Repos, Signer: archives.NewSigner(serverKey, cfg.Now),
		Cache: &archives.Cache{Dir: filepath.Join(cfg.DataDir, "archives"), MaxBytes: cfg.ArchiveCacheBytes, Now: cfg.Now}}
	a.Advisories = advisorydb.NewSource(db)
	a.DepReview = depreviewapi.New(depreviewapi.Config{Repos: a.Repos, Advisories: a.Advisories,
		CacheDependencies: cfg.ManifestCache, Logger: cfg.Logger})
	a.Dependabot = &dependabot.Service{DB: db, Events: a.Events, Repos: a.Repos, Advisories: a.Advisories}
	a.DependabotChecker = dependabot.NewChecker(a.Dependabot, dependabot.Config{}, cfg.Logger)
	a.Events.Subscribe(a.DependabotChecker)
	a.Migrations = orgmigration.NewService(db, a.Repos, cfg.Now, cfg.Logger)
	a.Migrations.CloneTokens = cloneTokens
	return a, nil
}

// Close closes the store.
func (a *App) Close() error { return a.DB.Close() }

// deploymentsHandler is the deployments area's handler, which also gates
// the Actions jobs that name an environment.
func (a *App) deploymentsHandler() *deployments.Handler {
	return &deployments.Handler{Service: a.Deployments, Repos: a.Repos, Statuses: a.Statuses, Git: a.Git, Teams: a.Teams,
		RuleApps: protectionRuleApps{a.Apps}, Protected: a.branchProtected, Actions: a.Actions, Now: a.Config.Now}
}

// RouteTable returns every area's route table without a store: the
// declarations alone (paths, auth rules, documentation pages), which the
// permission tables are generated from. Its handlers must not be called.
func RouteTable() []httpapi.Route { return (&App{}).Routes() }

// Routes returns every area's route table. It reads only the tables, so
// it works on an App with no store (RouteTable uses that).
func (a *App) Routes() []httpapi.Route {
	var routes []httpapi.Route
	area := func(page string, rs []httpapi.Route) {
		routes = append(routes, documentedOn(page, rs)...)
	}
	area(docs.API, (&accounts.Handler{DB: a.DB, Details: a.accountDetails, OrgUpdated: auditlog.OrgUpdated}).Routes())
	area(docs.GitHosting, (&repos.Handler{Service: a.Repos, RoleOf: access.ListedRepoRole, Templates: reference.Templates{}, CloneToken: a.cloneToken()}).Routes())
	area(docs.RepositoryContents, (&repocontent.Handler{Repos: a.Repos, Git: a.Git}).Routes())
	area(docs.RepositoryContents, (&gitdata.Handler{Repos: a.Repos, WebFlow: a.WebFlow}).Routes())
	area(docs.GitHosting, (&collaborators.Handler{Service: a.Collaborators}).Routes())
	area(docs.Issues, (&issues.Handler{Service: a.Issues}).Routes())
	area(docs.Pulls, (&pulls.Handler{Service: a.Pulls}).Routes())
	area(docs.BranchProtection, (&protection.Handler{Service: a.Protection, Repos: a.Repos}).Routes())
	area(docs.RepositoryContents, (&statuses.Handler{Service: a.Statuses, Repos: a.Repos}).Routes())
	area(docs.Checks, (&checks.Handler{Service: a.Checks, Repos: a.Repos}).Routes())
	area(docs.Actions, (&actions.Handler{Service: a.Actions}).Routes())
	area(docs.Deployments, a.deploymentsHandler().Routes())
	area(docs.ActionsSettings, (&settings.Handler{Service: a.ActionsSettings, Environment: a.environmentID}).Routes())
	area(docs.Commits, (&merges.Handler{Service: a.Merges}).Routes())
	area(docs.Commits, (&commitcomments.Handler{Service: a.CommitComments, Repos: a.Repos}).Routes())
	area(docs.Gists, (&gists.Handler{Service: a.Gists}).Routes())
	area(docs.Keys, (&keys.Handler{Service: a.Keys}).Routes())
	area(docs.Releases, (&releases.Handler{Service: a.Releases, Reactions: a.reactions().List(reactions.Release)}).Routes())
	area(docs.RepositoryContents, a.Archives.Routes()) // a nil Handler lists its routes
	area(docs.RepositoryContents, (&licenses.Handler{Repos: a.Repos}).Routes())
	area(docs.RepositoryStatistics, (&repostats.Handler{Service: &repostats.Service{DB: a.DB, Repos: a.Repos, Now: a.Config.Now}}).Routes())
	area(docs.GitHosting, (&codesearch.Handler{DB: a.DB, Repos: a.Repos}).Routes())
	area(docs.Commits, (&dispatches.Handler{DB: a.DB, Events: a.Events}).Routes())
	area(docs.Notifications, (&notifications.Handler{Service: &notifications.Service{DB: a.DB}}).Routes())
	area(docs.Reactions, a.reactions().Routes())
	area(docs.ArtifactMetadata, (&artifacts.Handler{DB: a.DB}).Routes())
	area(docs.DependencyReview, a.DepReview.Routes())
	area(docs.SecretScanning, (&secretscanning.Handler{Service: a.SecretScanning}).Routes())
	area(docs.CodeScanning, (&codescanning.Handler{Service: a.CodeScanning}).Routes())
	area(docs.Dependabot, (&dependabot.Handler{Service: a.Dependabot}).Routes())
	area(docs.Migrations, (&orgmigration.Handler{Service: a.Migrations}).Routes())
	area(docs.OAuth, (&oauth.Handler{Service: a.OAuth, Removed: a.Config.AuthorizationsAPI == oauth.APIRemoved}).Routes())
	area(docs.OAuth, (&oauthweb.Handler{Service: a.OAuthWeb}).Routes())
	area(docs.CustomAgents, (&agents.Handler{Service: a.Agents}).Routes())
	area(docs.SiteAdmin, (&siteadmin.Handler{Service: &siteadmin.Service{DB: a.DB, Repos: a.Repos, OAuth: a.OAuth, Events: a.Events}, Keys: a.Keys}).Routes())
	area(docs.EventFeeds, (&activity.Handler{Service: a.Activity}).Routes())
	area(docs.EventFeeds, a.Feeds.Routes())
	area(docs.Webhooks, (&webhooks.Handler{Service: a.Webhooks}).Routes())
	area(docs.Organizations, (&orgs.Handler{Service: a.Orgs, Collaborators: a.Collaborators}).Routes())
	area(docs.Organizations, (&blocks.Handler{DB: a.DB, Events: a.Events}).Routes())
	area(docs.Organizations, (&rulesets.Handler{Service: a.Rulesets}).Routes())
	area(docs.BranchProtection, (&rulesets.Handler{Service: a.Rulesets}).RepoRoutes())
	area(docs.Organizations, (&auditlog.Handler{DB: a.DB}).Routes())
	area(docs.Organizations, (&teams.Handler{Service: a.Teams}).Routes())
	area(docs.RepositorySettings, (&reposettings.Handler{DB: a.DB}).Routes())
	area(docs.PreReceiveHooks, (&prereceive.Handler{Service: a.PreReceive}).Routes())
	area(docs.CustomProperties, (&customprops.Handler{Service: &customprops.Service{DB: a.DB, Events: a.Events}}).Routes())
	area(docs.OrganizationRoles, (&orgroles.Handler{Service: &orgroles.Service{DB: a.DB}}).Routes())
	area(docs.Apps, (&apps.Handler{Service: a.Apps}).Routes())
	area(docs.Markdown, (&markdownapi.Handler{DB: a.DB}).Routes())
	area(docs.API, (&reference.Handler{}).Routes())
	area(docs.Operations, operationalRoutes())
	area(docs.API, rootRoutes())
	area(docs.GraphQL, (&graphql.Handler{DB: a.DB, Repos: a.Repos, Git: a.Git, Pulls: a.Pulls, Issues: a.Issues, Deployments: a.Deployments, Releases: a.Releases, Gists: a.Gists}).Routes())
	return routes
}

// environmentID finds a repository's environment by name for the Actions
// settings area, which does not import deployments.
func (a *App) environmentID(ctx context.Context, repoID int64, name string) (int64, bool, error) {
	e, err := a.Deployments.Environment(ctx, repoID, name)
	if errors.Is(err, store.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return e.ID, true, nil
}

// protectionRuleApps finds the apps of custom deployment protection
// rules for the deployments area, which does not import apps (they stand
// on one floor).
type protectionRuleApps struct{ apps *apps.Service }

// Available is apps.Service.ProtectionRuleApps.
func (p protectionRuleApps) Available(ctx context.Context, repo *repos.Repository) ([]deployments.RuleApp, error) {
	list, err := p.apps.ProtectionRuleApps(ctx, repo)
	out := make([]deployments.RuleApp, 0, len(list))
	for _, a := range list {
		out = append(out, deployments.RuleApp{ID: a.ID, Slug: a.Slug})
	}
	return out, err
}

// App is the app of that id, false when there is none.
func (p protectionRuleApps) App(ctx context.Context, id int64) (deployments.RuleApp, bool, error) {
	a, err := apps.ByID(ctx, p.apps.DB, id)
	if errors.Is(err, store.ErrNotFound) {
		return deployments.RuleApp{}, false, nil
	}
	if err != nil {
		return deployments.RuleApp{}, false, err
	}
	return deployments.RuleApp{ID: a.ID, Slug: a.Slug}, true, nil
}

// Installation is the app's installation on the repository's owner that
// selects it, not suspended.
func (p protectionRuleApps) Installation(ctx context.Context, q store.Q, appID int64, repo *repos.Repository) (int64, bool, error) {
	inst, err := apps.InstallationOn(ctx, q, appID, repo.Owner.ID)
	if errors.Is(err, store.ErrNotFound) {
		return 0, false, nil
	}
	if err != nil {
		return 0, false, err
	}
	return inst.ID, !inst.Suspended() && inst.Selects(repo), nil
}

// AppOfInstallation is the app of the installation, false when there is
// none.
func (p protectionRuleApps) AppOfInstallation(ctx context.Context, installationID int64) (deployments.RuleApp, bool, error) {
	a, err := apps.ByInstallation(ctx, p.apps.DB, installationID)
	if errors.Is(err, store.ErrNotFound) {
		return deployments.RuleApp{}, false, nil
	}
	if err != nil {
		return deployments.RuleApp{}, false, err
	}
	return deployments.RuleApp{ID: a.ID, Slug: a.Slug}, true, nil
}

// documentedOn gives the routes of an area that name no documentation
// page of their own the area's page, which their errors link to.
func documentedOn(page string, routes []httpapi.Route) []httpapi.Route {
	for i := range routes {
		if routes[i].Docs == "" {
			routes[i].Docs = page
		}
	}
	return routes
}

// Main is the running server.
type Main struct {
	App      *App
	listener net.Listener
	http     *http.Server
	api      *httpapi.Server
	metrics  *httpapi.Metrics
	// metricsHTTP serves the metrics on Config.MetricsAddr (nil when off).
	metricsHTTP *http.Server
	metricsURL  string
	url         string
	baseURL     string
	caFile      string // the local CA of --tls self-signed
	served      chan error
	// ssh serves git over SSH on Config.SSHAddr (nil when off).
	ssh *sshServer
	// exclusive: no other server runs on the database, so work leased
	// by an earlier process is left over from its stop or crash.
	exclusive bool
	stopOnce  sync.Once
	workers   context.CancelFunc
	wg        sync.WaitGroup
}

// Start opens the app, binds the listen address and serves in the
// background. It returns once connections are accepted and logs
// "listening on http://HOST:PORT".
func Start(ctx context.Context, cfg Config) (_ *Main, err error) {
	cfg.setDefaults()
	// Said before the store opens: a first start migrates the schema.
	cfg.Logger.Info("starting forgeapi", "version", ReadBuildInfo().String(), "data_dir", cfg.DataDir,
		"database", databaseKind(cfg.DatabaseURL), "database_at", DescribeDatabase(cfg.DataDir, cfg.DatabaseURL))
	var opened closers
	defer opened.closeOnError(&err)
	a, err := Open(ctx, cfg)
	if err != nil {
		return nil, err
	}
	opened.add(a.Close)
	exclusive, err := a.DB.ClaimServer()
	if err != nil {
		return nil, err
	}
	return serve(ctx, a, exclusive)
}

// serve serves a; exclusive says that no other server runs on its
// database (see store.DB.ClaimServer).
func serve(ctx context.Context, a *App, exclusive bool) (_ *Main, err error) {
	cfg := a.Config
	var opened closers
	defer opened.closeOnError(&err)
	ln, err := net.Listen("tcp", cfg.Addr)
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", cfg.Addr, err)
	}
	opened.add(ln.Close)
	host, _, _ := net.SplitHostPort(cfg.Addr)
	tlsConfig, caFile, err := serverTLS(cfg, host)
	if err != nil {
		return nil, err
	}
	scheme := "http://"
	if tlsConfig != nil {
		scheme = "https://"
	}
	m := &Main{App: a, listener: ln, served: make(chan error, 1), url: scheme + ln.Addr().String(), caFile: caFile,
		exclusive: exclusive}
	base := cfg.BaseURL
	if base == "" {
		base = m.url
	}
	if m.baseURL, err = PublicBaseURL(base); err != nil {
		return nil, fmt.Errorf("base URL: %w", err)
	}
	base = m.baseURL
	local, err := m.openBlobs()
	if err != nil {
		return nil, err
	}
	if err := m.listenSSH(cfg); err != nil {
		return nil, err
	}
	opened.add(m.closeSSH)
	sshPort := SSHPortOf(m.SSHAddr())
	m.metrics = httpapi.NewMetrics()
	m.api, err = httpapi.NewServer(httpapi.Config{BaseURL: base, SSHPort: sshPort, RateLimit: cfg.RateLimit, Now: cfg.Now,
		AccessLog: cfg.Logger, IdleTimeout: cfg.IdleTimeout, BodyTimeout: cfg.BodyTimeout,
		Bodies: (&markdownapi.Handler{DB: a.DB}).RenderBody}, a.Authn, &access.Guard{DB: a.DB, Accounts: a.Accounts, Repos: a.repoStanding}, m.metrics, a.Routes())
	if err != nil {
		return nil, err
	}
	if err := m.serveMetrics(cfg); err != nil {
		return nil, err
	}
	a.Git.BaseURL, a.Git.SSHPort = base, sshPort
	a.Git.AuthFailed = func(r *http.Request) { m.api.ChargeAnonymous(r) }
	a.Webhooks.BaseURL, a.Webhooks.SSHPort = base, sshPort
	a.SecretScanning.BaseURL, a.CodeScanning.BaseURL, a.Dependabot.BaseURL = base, base, base
	a.Actions.BaseURL = base
	pages := &console.Handler{DB: a.DB, Authn: a.Authn, Webhooks: a.Webhooks, OAuth: a.OAuth, OAuthWeb: a.OAuthWeb, Now: cfg.Now, Logger: cfg.Logger,
		Announcement: (&siteadmin.Service{DB: a.DB}).AnnouncementMessage}
	pages.Register(m.api)
	repoPages := &web.Handler{DB: a.DB, Console: pages, Repos: a.Repos, Issues: a.Issues, Pulls: a.Pulls, Releases: a.Releases,
		CommitComments: a.CommitComments, Files: (&keys.Handler{Service: a.Keys}).ServeFile, Code: &codesearch.Handler{DB: a.DB, Repos: a.Repos}}
	repoPages.Register(m.api)
	a.Git.Web = webChanges{api: m.api, releases: a.Releases, pages: repoPages.RepoPages()}
	a.Git.Register(m.api)
	(&gists.Handler{Service: a.Gists, Git: a.Git}).Register(m.api)
	(&oauthweb.Handler{Service: a.OAuthWeb}).Register(m.api)
	docsite.New().Register(m.api)
	(&releases.Handler{Service: a.Releases}).Register(m.api)
	(&actions.Handler{Service: a.Actions}).Register(m.api) // the results service of jobs' artifacts and caches
	m.api.Handle("GET /healthz", healthHandler(a.DB, ReadBuildInfo()))
	a.Archives.Register(m.api)
	if local != nil {
		m.api.Handle("GET "+blob.URLPathPrefix+"{key}", local.Handler())
	}
	if removed, err := a.Git.Git.RemoveStale(); err != nil || removed > 0 {
		cfg.Logger.Info("removed the quarantine directories of pushes cut short by the last stop", "count", removed, "err", err)
	}
	m.serveSSH(cfg)
	workerCtx, cancel := context.WithCancel(context.WithoutCancel(ctx))
	m.workers = cancel
	m.startWorkers(workerCtx)
	handler := http.Handler(m.api)
	if tlsConfig != nil {
		handler = withHSTS(handler, strictTransportSecurity(cfg))
	}
	m.http = &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: cfg.HeaderTimeout,
		IdleTimeout:       max(cfg.IdleTimeout, MinKeepAlive),
		ErrorLog:          slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn),
		TLSConfig:         tlsConfig, // HTTP/2 is offered with TLS
	}
	quiet := newQuietConns()
	m.http.ConnState = quiet.track
	m.http.RegisterOnShutdown(quiet.closeAll)
	go func() {
		if tlsConfig != nil {
			m.served <- m.http.ServeTLS(ln, "", "")
		} else {
			m.served <- m.http.Serve(ln)
		}
		close(m.served) // Close still returns when a Done reader took the error
	}()
	if caFile != "" {
		cfg.Logger.Info("serving HTTPS with a certificate of forgeapi's local CA: trust it with SSL_CERT_FILE, GIT_SSL_CAINFO or NODE_EXTRA_CA_CERTS",
			"ca_file", caFile)
	}
	cfg.Logger.Info("listening on "+m.url, "addr", ln.Addr().String(), "base_url", m.baseURL,
		"data_dir", cfg.DataDir, "database", databaseKind(cfg.DatabaseURL), "metrics", m.metricsURL,
		"version", ReadBuildInfo().Version)
	return m, nil
}

// serveMetrics serves GET /metrics on Config.MetricsAddr, when set, on a
// listener of its own.
func (m *Main) serveMetrics(cfg Config) error {
	if cfg.MetricsAddr == "" {
		return nil
	}
	ln, err := net.Listen("tcp", cfg.MetricsAddr)
	if err != nil {
		return fmt.Errorf("listen on %s (metrics): %w", cfg.MetricsAddr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("GET /metrics", m.metrics.Handler())
	m.metricsURL = "http://" + ln.Addr().String() + "/metrics"
	m.metricsHTTP = &http.Server{Handler: mux, ReadHeaderTimeout: 30 * time.Second,
		ErrorLog: slog.NewLogLogger(cfg.Logger.Handler(), slog.LevelWarn)}
	go func() { _ = m.metricsHTTP.Serve(ln) }()
	return nil
}

// MetricsURL is the URL of the Prometheus metrics, http://HOST:PORT/metrics,
// or "" when Config.MetricsAddr is empty.
func (m *Main) MetricsURL() string { return m.metricsURL }

// startWorkers starts the background workers, one list started together
// in a goroutine each; Close stops them together (cancels their context
// and waits for every Run to return).
func (m *Main) startWorkers(ctx context.Context) {
	if m.exclusive {
		m.releaseLeases(ctx)
	}
	m.recoverPushes(ctx)
	for _, w := range m.workerList() {
		m.wg.Add(1)
		go func() { defer m.wg.Done(); w.Run(ctx) }()
	}
}

// workerList is every background worker of the server. The advisory
// index is built by the first dependency review request, not here: it
// reads every stored advisory document (seconds and tens of MB of heap
// for a full OSV database), work a start must not do and memory a server
// that reviews no dependencies should not hold.
func (m *Main) workerList() []worker.Worker {
	feedsPruner := feeds.NewPruner(m.App.DB, m.App.Config.Now, m.App.Config.Feeds, m.App.Config.Logger)
	feedsPruner.AfterDelete = m.App.Feeds.Invalidate
	workers := []worker.Worker{
		feedsPruner,
		m.migrationExporter(),
		webhooks.NewDispatcher(m.App.Webhooks),
		webhooks.NewPruner(m.App.Webhooks),
		m.App.PushRecovery,
		m.App.Orgs.Deleter,
		m.App.Pulls.Checker,
		m.App.CodeSearch,
		m.App.SecretScanner,
		m.App.SARIFs,
		m.App.DependabotChecker,
		m.App.ActionsScheduler,
		m.App.ActionsArtifactPruner,
		m.App.ActionsCachePruner,
		actions.NewLostJobs(m.App.Actions, m.App.Config.Logger), // registered runners' jobs whose lease ran out
	}
	if m.App.ActionsRunner != nil {
		workers = append(workers, m.App.ActionsRunner)
	}
	if m.App.GitMaintenance.Periodic() {
		// In the background from the start: git gc may take minutes.
		workers = append(workers, m.App.GitMaintenance)
	}
	if m.App.GistMaintenance.Periodic() {
		workers = append(workers, m.App.GistMaintenance)
	}
	return workers
}

// releaseLeases ends the work leases the last process held when it
// stopped (a kill -9), before the workers start: its deliveries go out,
// its exports, checks, deletions, push recoveries and git gc runs are
// taken up now rather than when their leases end (from a minute to an
// hour). Only a server that is its database's only one calls it.
func (m *Main) releaseLeases(ctx context.Context) {
	for _, work := range []struct {
		what    string
		release func(context.Context) (int64, error)
	}{
		{"webhook deliveries", m.App.Webhooks.ReleaseLeases},
		{"organization migration exports", m.App.Migrations.ReleaseLeases},
		{"push recoveries", m.App.PushRecovery.ReleaseLeases},
		{"git maintenance runs", m.App.GitMaintenance.ReleaseLeases},
		{"gist maintenance runs", m.App.GistMaintenance.ReleaseLeases},
		{"organization deletions", m.App.Orgs.Deleter.ReleaseLeases},
		{"pull request checks", m.App.Pulls.Checker.ReleaseLeases},
		{"code search indexing", m.App.CodeSearch.ReleaseLeases},
		{"secret scanning", m.App.SecretScanner.ReleaseLeases},
		{"code scanning uploads", m.App.SARIFs.ReleaseLeases},
		{"dependabot checks", m.App.DependabotChecker.ReleaseLeases},
		{"Actions jobs (failed: a job is never run twice)", m.App.Actions.ReleaseLeases},
	} {
		n, err := work.release(ctx)
		if err != nil {
			m.App.Config.Logger.Error("release the "+work.what+" leased by the last run", "err", err)
		} else if n > 0 {
			m.App.Config.Logger.Info("released the "+work.what+" leased by the last run", "count", n)
		}
	}
}

// recoverPushes records the events of pushes cut short by the last stop
// before the server takes requests (all of them when the server is its
// database's only one, those past the grace period otherwise); the
// periodic recovery is one of the workers.
func (m *Main) recoverPushes(ctx context.Context) {
	if m.exclusive {
		m.App.PushRecovery.RecoverLeftovers(ctx)
	} else {
		m.App.PushRecovery.RunOnce(ctx)
	}
}

// loadSecretKey returns the server's secret key, which seals webhook
// secrets and TOTP seeds and keys the clone tokens: the configured key,
// or DATA/webhook.key (created on first start).
func loadSecretKey(cfg Config) ([]byte, error) {
	var key []byte
	var err error
	if cfg.Webhooks.SecretKey != "" {
		key, err = secretbox.ParseKey(cfg.Webhooks.SecretKey)
	} else {
		key, err = secretbox.LoadOrCreateKey(filepath.Join(cfg.DataDir, "webhook.key"))
	}
	if err != nil {
		return nil, fmt.Errorf("secret key: %w", err)
	}
	return key, nil
}

// Handler is the server's HTTP handler (every route and middleware), for
// benchmarks that measure the server without the network.
func (m *Main) Handler() http.Handler { return m.api }

// URL is the address the server listens on, as http://HOST:PORT.
func (m *Main) URL() string { return m.url }

// CAFile is the local CA certificate clients trust for --tls self-signed
// ("" otherwise).
func (m *Main) CAFile() string { return m.caFile }

// Done delivers the serve error once, then is closed, when the server
// stops (on its own, or through Close).
func (m *Main) Done() <-chan error { return m.served }

// Close shuts down gracefully: it stops accepting connections, lets
// in-flight requests finish (up to 30 seconds), stops the workers and
// closes the store.
func (m *Main) Close() error {
	var err error
	m.stopOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		err = m.http.Shutdown(ctx)
		if m.metricsHTTP != nil {
			err = errors.Join(err, m.metricsHTTP.Shutdown(ctx))
		}
		err = errors.Join(err, m.closeSSH())
		if serveErr := <-m.served; serveErr != nil && !errors.Is(serveErr, http.ErrServerClosed) {
			err = errors.Join(err, serveErr)
		}
		m.workers()
		m.wg.Wait()
		err = errors.Join(err, m.App.Close())
	})
	return err
}

func trimSlash(s string) string {
	for len(s) > 0 && s[len(s)-1] == '/' {
		s = s[:len(s)-1]
	}
	return s
}

// branchProtected reports whether the repository's branch is protected
// (the protected_branches deployment branch policy), reading through q,
// the caller's transaction when it has one.
func (a *App) branchProtected(ctx context.Context, q store.Q, repo *repos.Repository, branch string) (bool, error) {
	_, err := protection.Of(ctx, q, repo.ID, branch)
	if errors.Is(err, protection.ErrNotProtected) {
		return false, nil
	}
	return err == nil, err
}

// cloneToken mints the temp_clone_token of GET /repos/{owner}/{repo}
// (nil without an authenticator: RouteTable's App).
func (a *App) cloneToken() func(repoID, userID int64) string {
	if a.Authn == nil || a.Authn.Clone == nil {
		return nil
	}
	return func(repoID, userID int64) string {
		token, _ := a.Authn.Clone.Mint(repoID, userID)
		return token
	}
}
