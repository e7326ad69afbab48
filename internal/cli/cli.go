// Package cli is forgeapi's command line (cobra): `forgeapi serve`, which
// starts the server of package app with the configuration its flags and
// environment variables give, and the admin commands (user, org,
// enterprise, repo, app, oauth-app, token, advisories, backup, restore,
// permissions), which open the same store through app.Open and act on it
// directly. Execute is the whole program: it returns the exit code and
// writes errors as one line on stderr.
package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"forgeapi/internal/actions/engine"
	"forgeapi/internal/apierr"
	"forgeapi/internal/app"
	"forgeapi/internal/git/githttp"
	"forgeapi/internal/webhooks"
	"forgeapi/internal/webhooks/hookshot"
)

// Execute runs the forgeapi command line with args (without the program
// name) and returns the process exit code. Errors are one line on stderr.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := NewCommand(stdout, stderr)
	root.SetArgs(args)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "forgeapi: "+oneLine(err))
		return 1
	}
	return 0
}

// oneLine renders an error for the terminal: a validation error says
// which field and why.
func oneLine(err error) string {
	var apiErr *apierr.Error
	if errors.As(err, &apiErr) && len(apiErr.Errors) > 0 {
		parts := make([]string, 0, len(apiErr.Errors))
		for _, f := range apiErr.Errors {
			s := f.Field + ": " + f.Code
			if f.Message != "" {
				s = f.Field + ": " + f.Message
			}
			parts = append(parts, s)
		}
		return apiErr.Message + ": " + strings.Join(parts, "; ")
	}
	if errors.As(err, &apiErr) {
		return apiErr.Message
	}
	return strings.ReplaceAll(err.Error(), "\n", " ")
}

// cli carries the flags every command shares.
type cli struct {
	stdout, stderr io.Writer
	dataDir        string
	databaseURL    string
	baseURL        string
	logLevel       string
	logFormat      string
	// progress receives the progress lines of long admin operations:
	// stderr when it is a terminal, else nil (scripts and logs get none).
	progress io.Writer
}

// NewCommand builds the command tree.
func NewCommand(stdout, stderr io.Writer) *cobra.Command {
	return (&cli{stdout: stdout, stderr: stderr, progress: terminal(stderr)}).command()
}

// command builds the command tree over c.
func (c *cli) command() *cobra.Command {
	stdout, stderr := c.stdout, c.stderr
	root := &cobra.Command{
		Use:           "forgeapi",
		Short:         "A self-hostable server for the Service REST API",
		Version:       app.ReadBuildInfo().String(),
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetVersionTemplate("forgeapi {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVar(&c.dataDir, "data", envOr("FORGEAPI_DATA", "./forgeapi-data"), "data directory (env FORGEAPI_DATA)")
	pf.StringVar(&c.databaseURL, "database", os.Getenv("FORGEAPI_DATABASE"), "database URL: empty for SQLite under --data, or postgres://... (env FORGEAPI_DATABASE)")
	pf.StringVar(&c.baseURL, "base-url", os.Getenv("FORGEAPI_BASE_URL"), "public base URL used in url fields (served and printed by admin commands); default http://ADDR (env FORGEAPI_BASE_URL)")
	pf.StringVar(&c.logLevel, "log-level", envOr("FORGEAPI_LOG_LEVEL", "info"), "debug, info, warn or error; requests are logged at info (env FORGEAPI_LOG_LEVEL)")
	pf.StringVar(&c.logFormat, "log-format", envOr("FORGEAPI_LOG_FORMAT", app.LogFormatText), "text or json (env FORGEAPI_LOG_FORMAT)")
	root.AddCommand(c.serveCommand(), c.versionCommand(), c.userCommand(), c.orgCommand(), c.enterpriseCommand(),
		c.repoCommand(), c.appCommand(), c.oauthAppCommand(), c.tokenCommand(), c.permissionsCommand(),
		c.advisoriesCommand(), c.backupCommand(), c.restoreCommand(), c.runnerCommand())
	return root
}

func (c *cli) versionCommand() *cobra.Command {
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, VCS revision and Go version of this build",
		Args:  cobra.NoArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := fmt.Fprintln(c.stdout, "forgeapi "+app.ReadBuildInfo().String())
			return err
		},
	}
}

// terminal returns w when it is a terminal (a character device), else nil.
func terminal(w io.Writer) io.Writer {
	f, ok := w.(*os.File)
	if !ok {
		return nil
	}
	info, err := f.Stat()
	if err != nil || info.Mode()&os.ModeCharDevice == 0 {
		return nil
	}
	return w
}

// say writes a progress line when stderr is a terminal.
func (c *cli) say(format string, args ...any) {
	if c.progress != nil {
		fmt.Fprintf(c.progress, "forgeapi: "+format+"\n", args...)
	}
}

// logger returns the logger --log-level and --log-format configure,
// writing to stderr.
func (c *cli) logger() (*slog.Logger, error) {
	return app.NewLogger(c.stderr, c.logLevel, c.logFormat)
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

func (c *cli) serveCommand() *cobra.Command {
	cfg := app.Config{}
	var rateLimit, retention, runnerImages string
	var hookTimeout, hookRetries, hookRateLimit, hookRetention string
	var limits httpLimitFlags
	cmd := &cobra.Command{
		Use:   "serve",
		Short: "Run the HTTP API, git over HTTP and the background workers",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			switch rateLimit {
			case "on":
				cfg.RateLimit = true
			case "off":
				cfg.RateLimit = false
			default:
				return fmt.Errorf("--rate-limit must be on or off, not %q", rateLimit)
			}
			var err error
			if cfg.ActionsRunner.Images, err = engine.ParseImages(runnerImages); err != nil {
				return fmt.Errorf("--runner-images: %w", err)
			}
			if cfg.Feeds.Retention, err = parseDays(retention); err != nil {
				return fmt.Errorf("--event-retention: %w", err)
			}
			if err := parseWebhookFlags(&cfg.Webhooks, hookTimeout, hookRetries, hookRateLimit, hookRetention); err != nil {
				return err
			}
			if cfg.Logger, err = c.logger(); err != nil {
				return err
			}
			if err := limits.parse(&cfg); err != nil {
				return err
			}
			cfg.DataDir, cfg.DatabaseURL, cfg.BaseURL = c.dataDir, c.databaseURL, c.baseURL
			ctx, stop := signal.NotifyContext(cmd.Context(), os.Interrupt, syscall.SIGTERM)
			defer stop()
			m, err := app.Start(ctx, cfg)
			if err != nil {
				return err
			}
			select {
			case <-ctx.Done():
			case err := <-m.Done():
				return errors.Join(err, m.Close())
			}
			cfg.Logger.Info("shutting down")
			return m.Close()
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Addr, "addr", envOr("FORGEAPI_ADDR", "127.0.0.1:8080"), "listen address (env FORGEAPI_ADDR)")
	f.StringVar(&cfg.TLS, "tls", os.Getenv("FORGEAPI_TLS"),
		"self-signed: serve HTTPS (API and git, HTTP/2 included) with a certificate of a local CA made under DATA/tls, whose file the start log names (env FORGEAPI_TLS)")
	f.StringVar(&cfg.TLSCertFile, "tls-cert", os.Getenv("FORGEAPI_TLS_CERT"), "PEM certificate (chain) to serve HTTPS with, with --tls-key (env FORGEAPI_TLS_CERT)")
	f.StringVar(&cfg.TLSKeyFile, "tls-key", os.Getenv("FORGEAPI_TLS_KEY"), "PEM private key of --tls-cert (env FORGEAPI_TLS_KEY)")
	f.StringVar(&cfg.Webhooks.CAFile, "webhook-ca-file", os.Getenv("FORGEAPI_WEBHOOK_CA_FILE"),
		"PEM certificates trusted for HTTPS webhook receivers besides the system's (env FORGEAPI_WEBHOOK_CA_FILE)")
	f.StringVar(&cfg.MetricsAddr, "metrics-addr", os.Getenv("FORGEAPI_METRICS_ADDR"),
		"listen address of the Prometheus metrics (GET /metrics); empty (the default) serves no metrics; the API port never serves them (env FORGEAPI_METRICS_ADDR)")
	f.StringVar(&cfg.SSHAddr, "ssh-addr", os.Getenv("FORGEAPI_SSH_ADDR"),
		"listen address of git over SSH (user and deploy keys; host key made under DATA/ssh); empty (the default) serves none (env FORGEAPI_SSH_ADDR)")
	f.StringVar(&retention, "event-retention", envOr("FORGEAPI_EVENT_RETENTION", "30d"), "age past which events are deleted: 30d, 720h, ... (env FORGEAPI_EVENT_RETENTION)")
	f.StringVar(&cfg.Blob, "blob", os.Getenv("FORGEAPI_BLOB"), "migration archive storage: empty for DATA/blobs, file://PATH, or s3://BUCKET?endpoint=HOST:PORT&region=R&secure=BOOL&prefix=P with credentials from AWS_ACCESS_KEY_ID/AWS_SECRET_ACCESS_KEY (env FORGEAPI_BLOB)")
	f.StringVar(&rateLimit, "rate-limit", envOr("FORGEAPI_RATE_LIMIT", "on"), "on or off (env FORGEAPI_RATE_LIMIT)")
	f.BoolVar(&cfg.BuiltinRunner, "builtin-runner", os.Getenv("FORGEAPI_BUILTIN_RUNNER") == "on",
		"run Actions jobs in the server: workflows' steps run as shell commands ON THIS HOST, as the server's user, "+
			"unless --runner-images maps their runs-on label to an image (env FORGEAPI_BUILTIN_RUNNER=on)")
	f.StringVar(&runnerImages, "runner-images", os.Getenv("FORGEAPI_RUNNER_IMAGES"),
		"the built-in runner's runs-on labels mapped to container images, LABEL=IMAGE,... (as act's -P): those jobs run "+
			"in a container (needs a Docker daemon), the others on this host (env FORGEAPI_RUNNER_IMAGES)")
	f.StringVar(&cfg.AuthorizationsAPI, "authorizations-api", envOr("FORGEAPI_AUTHORIZATIONS_API", "enabled"),
		"enabled or removed: removed answers POST /authorizations with 410 and the other grant and authorization endpoints with 404 (env FORGEAPI_AUTHORIZATIONS_API)")
	f.StringVar(&cfg.Webhooks.AllowedHosts, "webhook-allowed-hosts", envOr("FORGEAPI_WEBHOOK_ALLOWED_HOSTS", "external"),
		"comma-separated webhook destinations allowed: external, loopback, private, CIDRs, host globs (*.example.com) or * (env FORGEAPI_WEBHOOK_ALLOWED_HOSTS)")
	f.StringVar((*string)(&cfg.Webhooks.HeaderNames), "webhook-header-names", envOr("FORGEAPI_WEBHOOK_HEADER_NAMES", "both"),
		"names of the delivery headers: service (X-Service-*), platform (X-GitHub-*, which receivers' libraries route on) or both (env FORGEAPI_WEBHOOK_HEADER_NAMES)")
	f.StringVar(&hookTimeout, "webhook-timeout", envOr("FORGEAPI_WEBHOOK_TIMEOUT", "10s"),
		"timeout of one webhook delivery (env FORGEAPI_WEBHOOK_TIMEOUT)")
	f.StringVar(&hookRetries, "webhook-retries", envOr("FORGEAPI_WEBHOOK_RETRIES", "0"),
		"automatic retries of a failed delivery, with exponential backoff; 0 retries none, as the platform (env FORGEAPI_WEBHOOK_RETRIES)")
	f.StringVar(&hookRateLimit, "webhook-rate-limit", envOr("FORGEAPI_WEBHOOK_RATE_LIMIT", "0"),
		"most deliveries per second to one hook, more wait and carry throttled_at; 0 for the default, -1 for no limit (env FORGEAPI_WEBHOOK_RATE_LIMIT)")
	f.StringVar(&hookRetention, "webhook-retention", envOr("FORGEAPI_WEBHOOK_RETENTION", "30d"),
		"age past which webhook deliveries are deleted (env FORGEAPI_WEBHOOK_RETENTION)")
	f.StringVar(&cfg.Webhooks.SecretKey, "secret-key", os.Getenv("FORGEAPI_SECRET_KEY"),
		"key sealing webhook secrets and TOTP seeds at rest: 64 hex digits or base64 of 32 bytes; default DATA/webhook.key, created on first start (env FORGEAPI_SECRET_KEY)")
	f.StringVar(&limits.maxPushSize, "max-push-size", envOr("FORGEAPI_MAX_PUSH_SIZE", "2GiB"),
		"largest pack a push may send (after any gzip encoding is undone): bytes, or with KiB, MiB, GiB; larger pushes are refused with a remote: message (env FORGEAPI_MAX_PUSH_SIZE)")
	f.StringVar(&limits.maxAssetSize, "max-asset-size", envOr("FORGEAPI_MAX_ASSET_SIZE", "2GiB"),
		"largest release asset an upload may send: bytes, or with KiB, MiB, GiB; larger uploads get 413 (env FORGEAPI_MAX_ASSET_SIZE)")
	f.StringVar(&limits.archiveCacheSize, "archive-cache-size", envOr("FORGEAPI_ARCHIVE_CACHE_SIZE", "2GiB"),
		"bound of the cache of built tarballs and zipballs under DATA/archives: bytes, or with KiB, MiB, GiB; the archives served least recently go first (env FORGEAPI_ARCHIVE_CACHE_SIZE)")
	f.StringVar(&limits.maxGitProcesses, "max-git-processes", envOr("FORGEAPI_MAX_GIT_PROCESSES", strconv.Itoa(githttp.DefaultMaxProcesses())),
		"git requests served at once (each runs git http-backend); more wait up to 10s, then get 503 with Retry-After; default 4 per CPU, at least 8 (env FORGEAPI_MAX_GIT_PROCESSES)")
	f.StringVar(&limits.headerTimeout, "header-timeout", envOr("FORGEAPI_HEADER_TIMEOUT", app.DefaultHeaderTimeout.String()),
		"time a client has to send a request's header (env FORGEAPI_HEADER_TIMEOUT)")
	f.StringVar(&limits.idleTimeout, "idle-timeout", envOr("FORGEAPI_IDLE_TIMEOUT", app.DefaultIdleTimeout.String()),
		"a request whose body read or response write makes no progress for this long is dropped, as is a kept-alive connection idle this long (2m at least); transfers that keep moving may take any time (env FORGEAPI_IDLE_TIMEOUT)")
	f.StringVar(&limits.bodyTimeout, "body-timeout", envOr("FORGEAPI_BODY_TIMEOUT", app.DefaultBodyTimeout.String()),
		"time a client has to send the body of an API request, plus 1s per 16 KiB received; slower bodies get 408 (git pushes are bound by --idle-timeout alone) (env FORGEAPI_BODY_TIMEOUT)")
	return cmd
}

// httpLimitFlags are the serve command's limits of git over HTTP and of
// the HTTP server, as given.
type httpLimitFlags struct {
	maxPushSize, maxGitProcesses, headerTimeout, idleTimeout, bodyTimeout string
	maxAssetSize                                                          string
	archiveCacheSize                                                      string
}

// parse parses the limits into cfg.
func (l httpLimitFlags) parse(cfg *app.Config) error {
	var err error
	if cfg.Git.MaxPushSize, err = parseSize(l.maxPushSize); err != nil {
		return fmt.Errorf("--max-push-size: %w", err)
	}
	if cfg.MaxAssetSize, err = parseSize(l.maxAssetSize); err != nil {
		return fmt.Errorf("--max-asset-size: %w", err)
	}
	if cfg.ArchiveCacheBytes, err = parseSize(l.archiveCacheSize); err != nil {
		return fmt.Errorf("--archive-cache-size: %w", err)
	}
	if cfg.Git.MaxProcesses, err = strconv.Atoi(l.maxGitProcesses); err != nil || cfg.Git.MaxProcesses <= 0 {
		return fmt.Errorf("--max-git-processes: want a positive number, not %q", l.maxGitProcesses)
	}
	if cfg.HeaderTimeout, err = time.ParseDuration(l.headerTimeout); err != nil || cfg.HeaderTimeout <= 0 {
		return fmt.Errorf("--header-timeout: want a positive duration such as 20s, not %q", l.headerTimeout)
	}
	if cfg.IdleTimeout, err = time.ParseDuration(l.idleTimeout); err != nil || cfg.IdleTimeout <= 0 {
		return fmt.Errorf("--idle-timeout: want a positive duration such as 60s, not %q", l.idleTimeout)
	}
	if cfg.BodyTimeout, err = time.ParseDuration(l.bodyTimeout); err != nil || cfg.BodyTimeout <= 0 {
		return fmt.Errorf("--body-timeout: want a positive duration such as 30s, not %q", l.bodyTimeout)
	}
	return nil
}

// parseSize parses a positive byte count, plain or with a binary unit
// (KiB, MiB, GiB, TiB; K, M, G, T and KB, MB, GB, TB mean the same).
func parseSize(s string) (int64, error) {
	digits := strings.TrimRight(s, "KMGTkmgtIiBb ")
	unit := strings.ToUpper(strings.TrimSpace(s[len(digits):]))
	shift := map[string]uint{"": 0, "B": 0, "K": 10, "KB": 10, "KIB": 10, "M": 20, "MB": 20, "MIB": 20,
		"G": 30, "GB": 30, "GIB": 30, "T": 40, "TB": 40, "TIB": 40}
	n, err := strconv.ParseInt(strings.TrimSpace(digits), 10, 64)
	sh, ok := shift[unit]
	if err != nil || !ok || n <= 0 || n > math.MaxInt64>>sh {
		return 0, fmt.Errorf("want a positive size such as 2GiB or 500MiB, not %q", s)
	}
	return n << sh, nil
}

// withApp opens the store for an admin command and closes it after.
func (c *cli) withApp(cmd *cobra.Command, fn func(ctx context.Context, a *app.App) error) error {
	logger, err := c.logger()
	if err != nil {
		return err
	}
	a, err := app.Open(cmd.Context(), app.Config{DataDir: c.dataDir, DatabaseURL: c.databaseURL, Logger: logger})
	if err != nil {
		return err
	}
	defer a.Close()
	if a.DB.Created {
		// A mistyped --data must not pass for an empty forge unnoticed.
		fmt.Fprintf(c.stderr, "forgeapi: created a new, empty store (%s); check --data and --database if you expected an existing one\n",
			app.DescribeDatabase(c.dataDir, c.databaseURL))
	}
	return fn(cmd.Context(), a)
}

func (c *cli) printJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// parseDays parses a positive duration that may also be written in days
// ("30d").
func parseDays(s string) (time.Duration, error) {
	var d time.Duration
	var err error
	if days, ok := strings.CutSuffix(s, "d"); ok {
		var n int
		n, err = strconv.Atoi(days)
		d = time.Duration(n) * 24 * time.Hour
	} else {
		d, err = time.ParseDuration(s)
	}
	if err != nil || d <= 0 {
		return 0, fmt.Errorf("want a positive duration such as 30d or 720h, not %q", s)
	}
	return d, nil
}

// parseWebhookFlags parses the serve command's webhook flags into cfg.
func parseWebhookFlags(cfg *webhooks.Config, timeout, retries, rateLimit, retention string) error {
	var err error
	if cfg.Timeout, err = time.ParseDuration(timeout); err != nil || cfg.Timeout <= 0 {
		return fmt.Errorf("--webhook-timeout: want a positive duration such as 10s, not %q", timeout)
	}
	if cfg.Retries, err = strconv.Atoi(retries); err != nil || cfg.Retries < 0 {
		return fmt.Errorf("--webhook-retries: want 0 or more, not %q", retries)
	}
	if cfg.RateLimit, err = strconv.ParseFloat(rateLimit, 64); err != nil {
		return fmt.Errorf("--webhook-rate-limit: want a number of deliveries per second, not %q", rateLimit)
	}
	if cfg.Retention, err = parseDays(retention); err != nil {
		return fmt.Errorf("--webhook-retention: %w", err)
	}
	if _, err := hookshot.ParseAllowList(cfg.AllowedHosts); err != nil {
		return fmt.Errorf("--webhook-allowed-hosts: %w", err)
	}
	if cfg.HeaderNames, err = hookshot.ParseHeaderNames(string(cfg.HeaderNames)); err != nil {
		return fmt.Errorf("--webhook-header-names: %w", err)
	}
	return nil
}
