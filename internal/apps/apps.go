// Package apps holds apps as the platform has them: registration (by the
// admin command line), their keys, their installations on users and
// organizations, and the routes an app calls as itself with a JSON web
// token (GET /app, installations, minting installation tokens) or with an
// installation token (GET /installation/repositories, DELETE
// /installation/token). An app acts through its bot account,
// {slug}[bot] of type Bot; the tokens of an installation are
// auth.KindInstallation tokens that name it, deleted with it and refused
// while it is suspended.
//
// An app's own webhook is a hook row of internal/webhooks (created with
// the app): it receives the events of its installations that the app
// subscribes to and holds the permission for (Service.Recipients,
// EventPermissions), and installation and installation_repositories,
// which Install, Uninstall and Suspend emit in their transaction.
package apps

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/secretbox"
	"forgeapi/internal/store"
	"forgeapi/internal/webhooks"
)

// App is a registered app.
type App struct {
	ID          int64
	Slug        string
	Name        string
	Description string
	OwnerID     int64
	BotID       int64
	ClientID    string
	// Permissions always hold metadata:read, as every app's do.
	Permissions auth.Grant
	Events      []string
	Public      bool
	CreatedAt   time.Time
	UpdatedAt   time.Time
}

// NewApp describes an app to register.
type NewApp struct {
	Name        string
	Description string
	Owner       *accounts.Account // a user or an organization
	Permissions auth.Grant
	Events      []string
	WebhookURL  string
	// WebhookSecret is stored sealed with the service's secret box.
	WebhookSecret      string
	WebhookContentType string // json (default) or form
	Public             bool
}

// Created is an app just registered, with the secrets known only now: the
// client secret and the PEM of its first private key.
type Created struct {
	App
	ClientSecret  string
	PrivateKeyPEM []byte
}

// Service registers apps and manages their installations and tokens.
type Service struct {
	DB *store.DB
	// Secrets seals the apps' webhook secrets (the box the webhooks
	// service opens them with).
	Secrets *secretbox.Box
	// Events receives the installation events; nil emits none.
	Events *events.Bus
	// installations caches each account's installations for Recipients
	// (see receivingOn); nil reads them every time. NewService makes it.
	installations *store.ReadCache[int64, []receiving]
}

// NewService returns a Service over db, sealing webhook secrets with
// secrets and emitting installation events on bus (nil: none). Made
// when the server starts, so that its cache of installations watches
// (and on PostgreSQL hears from the other servers of) every write to them.
func NewService(db *store.DB, secrets *secretbox.Box, bus *events.Bus) *Service {
	return &Service{DB: db, Secrets: secrets, Events: bus,
		installations: store.NewReadCache[int64, []receiving](db, 0, installationTables...)}
}

// ErrInvalid wraps the reasons an app or installation is refused.
var ErrInvalid = errors.New("invalid")

// PrivateKeyBits is the size of the RSA keys Create generates.
const PrivateKeyBits = 2048

// ClientIDLength is the length of an app's client id ("Iv23" and 16
// base62 characters, the form of the platform's newer client ids).
const ClientIDLength = 20

var eventName = regexp.MustCompile(`^[a-z_]{1,64}$`)

// Slug returns the URL-friendly name of an app name: lower case, runs of
// other characters than letters and digits as one '-'.
func Slug(name string) string {
	var b strings.Builder
	dash := false
	for _, r := range strings.ToLower(name) {
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			if dash && b.Len() > 0 {
				b.WriteByte('-')
			}
			b.WriteRune(r)
			dash = false
			continue
		}
		dash = true
	}
	return b.String()
}

// Create registers an app with a new bot account, client id and secret
// and RSA private key (whose public half it keeps). A slug or bot login
// already taken is a store.ErrConflict; bad input wraps ErrInvalid.
func (s *Service) Create(ctx context.Context, n NewApp) (*Created, error) {
	slug, err := n.check()
	if err != nil {
		return nil, err
	}
	key, err := rsa.GenerateKey(rand.Reader, PrivateKeyBits)
	if err != nil {
		return nil, err
	}
	pubDER, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return nil, err
	}
	sealed, err := s.sealSecret(n.WebhookSecret)
	if err != nil {
		return nil, err
	}
	c := &Created{
		App: App{Slug: slug, Name: n.Name, Description: n.Description, OwnerID: n.Owner.ID,
			ClientID: "Iv23" + auth.RandomString(ClientIDLength-4), Permissions: withMetadata(n.Permissions),
			Events: nonNil(n.Events), Public: n.Public, CreatedAt: store.Now()},
		ClientSecret:  auth.RandomString(40),
		PrivateKeyPEM: pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)}),
	}
	c.UpdatedAt = c.CreatedAt
	pubPEM := string(pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pubDER}))
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		bot, err := accounts.Create(ctx, tx, accounts.NewAccount{Type: accounts.TypeBot, Login: slug + "[bot]"})
		if err != nil {
			return err
		}
		c.BotID = bot.ID
		if err := insertApp(ctx, tx, &c.App, auth.HashToken(c.ClientSecret)); err != nil {
			return err
		}
		if _, err := webhooks.CreateAppHook(ctx, tx, webhooks.NewAppHook{AppID: c.ID, URL: n.WebhookURL,
			SealedSecret: sealed, ContentType: n.WebhookContentType}, c.CreatedAt); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `INSERT INTO app_keys (app_id, public_key, created_at) VALUES ($1, $2, $3)`,
			c.ID, pubPEM, c.CreatedAt)
		return store.Normalize(err)
	})
	if err != nil {
		return nil, err
	}
	return c, nil
}

// check validates n, defaults its webhook content type to json, and
// returns the app's slug; bad input wraps ErrInvalid.
func (n *NewApp) check() (string, error) {
	slug := Slug(n.Name)
	if slug == "" || !accounts.ValidLogin(slug) {
		return "", fmt.Errorf("%w: app name %q gives no valid slug", ErrInvalid, n.Name)
	}
	if n.Owner == nil || n.Owner.Type == accounts.TypeBot {
		return "", fmt.Errorf("%w: an app is owned by a user or an organization", ErrInvalid)
	}
	for _, e := range n.Events {
		if !eventName.MatchString(e) {
			return "", fmt.Errorf("%w: event %q", ErrInvalid, e)
		}
	}
	if n.WebhookContentType == "" {
		n.WebhookContentType = "json"
	}
	if n.WebhookContentType != "json" && n.WebhookContentType != "form" {
		return "", fmt.Errorf("%w: webhook content type must be json or form", ErrInvalid)
	}
	if n.WebhookURL != "" && !webhooks.ValidURL(n.WebhookURL) {
		return "", fmt.Errorf("%w: webhook URL %q is not an http or https URL with a host", ErrInvalid, n.WebhookURL)
	}
	return slug, nil
}

// sealSecret seals a webhook secret; "" stays "" (no secret).
func (s *Service) sealSecret(secret string) (string, error) {
	if secret == "" {
		return "", nil
	}
	return s.Secrets.Seal(secret)
}

func insertApp(ctx context.Context, q store.Q, a *App, secretHash string) error {
	events, _ := json.Marshal(a.Events)
	err := q.QueryRowContext(ctx, `
		INSERT INTO apps (slug, name, description, owner_id, bot_id, client_id, client_secret_hash, permissions,
		                  events, public, created_at, updated_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11) RETURNING id`,
		a.Slug, a.Name, a.Description, a.OwnerID, a.BotID, a.ClientID, secretHash, a.Permissions.JSON(),
		string(events), a.Public, a.CreatedAt).Scan(&a.ID)
	return store.Normalize(err)
}

// withMetadata returns the grant with metadata:read added, which every
// app holds.
func withMetadata(g auth.Grant) auth.Grant {
	out := auth.Grant{"metadata": auth.Read}
	for n, l := range g {
		out[n] = l
	}
	return out
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

const appColumns = `id, slug, name, description, owner_id, bot_id, client_id, permissions, events,
	public, created_at, updated_at`

func scanApp(row interface{ Scan(...any) error }) (*App, error) {
	var a App
	var perms, events string
	err := row.Scan(&a.ID, &a.Slug, &a.Name, &a.Description, &a.OwnerID, &a.BotID, &a.ClientID, &perms, &events,
		&a.Public, &a.CreatedAt, &a.UpdatedAt)
	if err != nil {
		return nil, store.Normalize(err)
	}
	if a.Permissions, err = auth.ParseGrantJSON(perms); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(events), &a.Events); err != nil {
		return nil, err
	}
	a.Events = nonNil(a.Events)
	return &a, nil
}

// ByID returns the app with the id; store.ErrNotFound when none.
func ByID(ctx context.Context, q store.Q, id int64) (*App, error) {
	return scanApp(q.QueryRowContext(ctx, `SELECT `+appColumns+` FROM apps WHERE id = $1`, id))
}

// BySlug returns the app with the slug; store.ErrNotFound when none.
func BySlug(ctx context.Context, q store.Q, slug string) (*App, error) {
	return scanApp(q.QueryRowContext(ctx, `SELECT `+appColumns+` FROM apps WHERE slug = $1`, strings.ToLower(slug)))
}

// ByInstallation returns the app of the installation with the id;
// store.ErrNotFound when there is none.
func ByInstallation(ctx context.Context, q store.Q, installationID int64) (*App, error) {
	return scanApp(q.QueryRowContext(ctx, `SELECT `+appColumns+` FROM apps
		WHERE id = (SELECT app_id FROM app_installations WHERE id = $1)`, installationID))
}

// InstallationsCount returns how many installations the app has.
func InstallationsCount(ctx context.Context, q store.Q, appID int64) (int64, error) {
	var n int64
	err := q.QueryRowContext(ctx, `SELECT count(*) FROM app_installations WHERE app_id = $1`, appID).Scan(&n)
	return n, store.Normalize(err)
}
