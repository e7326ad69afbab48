package webhooks

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/apierr"
	"forgeapi/internal/auditlog"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// masked is how responses show a secret or password that is set. A
// client sending it back keeps the stored value (it is "the same secret").
const masked = "********"

// lastResponseTTL is the age past which a hook's last response is shown
// as null, as the specification's limits say.
const lastResponseTTL = 30 * 24 * time.Hour

const hookResource = "Hook"

// insecureSSL is config.insecure_ssl as sent: "0", "1", 0 or 1. Any other
// value decodes (so that the error is a field error) and fails validation.
type insecureSSL struct {
	value string
	bad   bool
}

// UnmarshalJSON accepts a string or a number.
func (v *insecureSSL) UnmarshalJSON(b []byte) error {
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		var n json.Number
		if err := json.Unmarshal(b, &n); err != nil {
			v.bad = true
			return nil
		}
		s = n.String()
	}
	if s != "0" && s != "1" {
		v.bad = true
	}
	v.value = s
	return nil
}

// configBody is a hook's config as a request sends it; nil fields were
// not sent.
type configBody struct {
	URL         *string      `json:"url"`
	ContentType *string      `json:"content_type"`
	Secret      *string      `json:"secret"`
	InsecureSSL *insecureSSL `json:"insecure_ssl"`
	Username    *string      `json:"username"`
	Password    *string      `json:"password"`
}

// hookBody is the body of POST and PATCH on a hook.
type hookBody struct {
	Name         *string     `json:"name"`
	Config       *configBody `json:"config"`
	Events       *[]string   `json:"events"`
	AddEvents    []string    `json:"add_events"`
	RemoveEvents []string    `json:"remove_events"`
	Active       *bool       `json:"active"`
}

// The length limits of a hook's config properties, in characters.
const (
	MaxURLLength      = 2048
	MaxSecretLength   = 1024
	MaxUsernameLength = 255
	MaxPasswordLength = 1024
)

// checkLengths adds a field error for each config property c sends that
// is over its length limit.
func (c *configBody) checkLengths(f *apierr.Fields) {
	for _, p := range []struct {
		field string
		value *string
		max   int
	}{
		{"url", c.URL, MaxURLLength},
		{"secret", c.Secret, MaxSecretLength},
		{"username", c.Username, MaxUsernameLength},
		{"password", c.Password, MaxPasswordLength},
	} {
		if p.value != nil {
			f.MaxLength(hookResource, p.field, *p.value, p.max)
		}
	}
}

// applyConfig sets the config properties c sends on h, keeping the others,
// and checks them. Secrets are sealed with the service's key; the masked
// value keeps the stored one.
func (s *Service) applyConfig(h *Hook, c *configBody, f *apierr.Fields) error {
	c.checkLengths(f)
	if c.URL != nil {
		h.URL = strings.TrimSpace(*c.URL)
	}
	if c.ContentType != nil {
		h.ContentType = *c.ContentType
		if h.ContentType != "json" && h.ContentType != "form" {
			f.Add(hookResource, "content_type", apierr.CodeInvalid)
		}
	}
	if c.InsecureSSL != nil {
		h.InsecureSSL = c.InsecureSSL.value
		if c.InsecureSSL.bad {
			f.Add(hookResource, "insecure_ssl", apierr.CodeInvalid)
		}
	}
	if c.Username != nil {
		h.Username = *c.Username
	}
	var err error
	if c.Secret != nil && *c.Secret != masked {
		if h.SealedSecret, err = s.Box.Seal(*c.Secret); err != nil {
			return err
		}
	}
	if c.Password != nil && *c.Password != masked {
		if h.SealedPassword, err = s.Box.Seal(*c.Password); err != nil {
			return err
		}
	}
	return nil
}

// replaceConfig is PATCH of a hook with config: the sent config replaces
// the old one; the secret and password are kept only when sent again.
func (s *Service) replaceConfig(h *Hook, c *configBody, f *apierr.Fields) error {
	old := *h
	h.URL, h.ContentType, h.InsecureSSL, h.Username = "", "form", "0", ""
	h.SealedSecret, h.SealedPassword = "", ""
	if c.Secret != nil && *c.Secret == masked {
		h.SealedSecret = old.SealedSecret
	}
	if c.Password != nil && *c.Password == masked {
		h.SealedPassword = old.SealedPassword
	}
	return s.applyConfig(h, c, f)
}

// checkURL adds a field error unless the hook's URL is an http(s) URL
// with a host.
func checkURL(h *Hook, f *apierr.Fields) {
	if h.URL == "" {
		*f = append(*f, apierr.FieldError{Resource: hookResource, Field: "url", Code: apierr.CodeMissingField,
			Message: "Config must contain URL"})
		return
	}
	if !ValidURL(h.URL) {
		*f = append(*f, apierr.FieldError{Resource: hookResource, Field: "url", Code: apierr.CodeInvalid,
			Message: "url is not a supported format"})
	}
}

// ValidURL reports whether s is a URL a hook may deliver to: http or
// https, with a host.
func ValidURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != "" && u.Hostname() != ""
}

// checkEvents adds a field error for each event name the platform does
// not know, or that hook h may not subscribe to (see validFor).
func checkEvents(h *Hook, events []string, f *apierr.Fields) {
	for _, e := range events {
		if !validFor(h, e) {
			*f = append(*f, apierr.FieldError{Resource: hookResource, Field: "events", Code: apierr.CodeInvalid,
				Message: fmt.Sprintf("%q is not a valid event name", e), Value: e})
		}
	}
}

// normalEvents sorts and de-duplicates event names; never nil.
func normalEvents(events []string) []string {
	out := append([]string{}, events...)
	slices.Sort(out)
	return slices.Compact(out)
}

// applyBody applies a POST or PATCH body to h (a new hook with the
// defaults, or the stored one) and returns the validation error, if any.
func (s *Service) applyBody(h *Hook, b *hookBody, creating bool) error {
	var f apierr.Fields
	switch {
	case b.Name != nil && *b.Name != "web":
		f.Add(hookResource, "name", apierr.CodeInvalid)
	case b.Name == nil && creating && h.OrgID != 0: // required for organization hooks only
		f.Add(hookResource, "name", apierr.CodeMissingField)
	}
	if b.Config != nil {
		if err := s.replaceConfig(h, b.Config, &f); err != nil {
			return err
		}
	}
	if creating || b.Config != nil {
		checkURL(h, &f)
	}
	if b.Events != nil {
		checkEvents(h, *b.Events, &f)
		h.Events = *b.Events
	}
	checkEvents(h, b.AddEvents, &f)
	h.Events = append(slices.Clone(h.Events), b.AddEvents...)
	h.Events = slices.DeleteFunc(h.Events, func(e string) bool { return slices.Contains(b.RemoveEvents, e) })
	h.Events = normalEvents(h.Events)
	if b.Active != nil {
		h.Active = *b.Active
	}
	return f.Err()
}

// newHook is a hook of the target with the platform's defaults.
func newHook(t target, appID, creatorID int64) *Hook {
	h := &Hook{Name: "web", Active: true, Events: []string{"push"}, ContentType: "form", InsecureSSL: "0",
		AppID: appID, CreatorID: creatorID}
	switch {
	case t.Global:
		h.Global, h.Events = true, slices.Clone(globalEvents)
	case t.Repo != nil:
		h.RepoID = t.Repo.ID
	default:
		h.OrgID = t.Org.ID
	}
	return h
}

// overlaps reports whether two event lists share an event ("*" shares
// every event).
func overlaps(a, b []string) bool {
	for _, e := range a {
		if e == "*" || slices.Contains(b, e) || slices.Contains(b, "*") {
			return true
		}
	}
	return false
}

// targetWord names the hook's target kind in messages.
func targetWord(h *Hook) string {
	if h.Global {
		return "installation"
	}
	if h.IsOrg() {
		return "organization"
	}
	return "repository"
}

// checkRules refuses a second hook with the same config and overlapping
// events, and applies the limit of MaxHooksPerEvent hooks per
// event to h against the target's other hooks.
func checkRules(h *Hook, others []*Hook) error {
	for _, o := range others {
		if o.URL == h.URL && overlaps(o.Events, h.Events) {
			msg := "Hook already exists on this " + targetWord(h)
			return apierr.Validation(apierr.FieldError{Resource: hookResource, Code: apierr.CodeCustom, Message: msg})
		}
	}
	candidates := h.Events
	if slices.Contains(h.Events, "*") {
		candidates = nil
		for e := range knownEvents {
			candidates = append(candidates, e)
		}
	}
	for _, e := range candidates {
		n := 0
		for _, o := range others {
			if o.Subscribed(e) {
				n++
			}
		}
		if n >= MaxHooksPerEvent {
			msg := fmt.Sprintf("The %s already has %d hooks subscribed to %q, the most allowed", targetWord(h), MaxHooksPerEvent, e)
			return apierr.Validation(apierr.FieldError{Resource: hookResource, Field: "events", Code: apierr.CodeCustom, Message: msg})
		}
	}
	return nil
}

// The queries of a target's undeleted hooks, by id.
const (
	repoHooksQuery = `SELECT ` + hookColumns + ` FROM ` + hooksFrom + ` WHERE repo_id = $1 AND deleted_at IS NULL ORDER BY id`
	orgHooksQuery  = `SELECT ` + hookColumns + ` FROM ` + hooksFrom + ` WHERE org_id = $1 AND deleted_at IS NULL ORDER BY id`
	// globalHooksQuery takes a $1 it ignores, as the others' target id.
	globalHooksQuery = `SELECT ` + hookColumns + ` FROM ` + hooksFrom + ` WHERE global AND $1 = 0 AND deleted_at IS NULL ORDER BY id`
)

// lockTarget serialises the hook writes of one target for the rest of tx,
// so that two concurrent creations cannot both pass checkRules. SQLite's
// immediate transactions are serialised already; PostgreSQL locks the
// target's row.
func (s *Service) lockTarget(ctx context.Context, tx store.Q, h *Hook) error {
	if s.DB.Dialect != store.Postgres {
		return nil
	}
	query := `SELECT id FROM repositories WHERE id = $1 FOR UPDATE`
	switch {
	case h.Global: // the installation has no row: a lock of the transaction named for its hooks
		_, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('forgeapi.global_hooks'))`)
		return store.Normalize(err)
	case h.IsApp():
		query = `SELECT id FROM apps WHERE id = $1 FOR UPDATE`
	case h.IsOrg():
		query = `SELECT id FROM accounts WHERE id = $1 FOR UPDATE`
	}
	var id int64
	return store.Normalize(tx.QueryRowContext(ctx, query, h.TargetID()).Scan(&id))
}

// targetHooks returns the undeleted hooks of the hook's target other than
// the hook itself, after locking the target (lockTarget). An app has no
// hook but its own.
func (s *Service) targetHooks(ctx context.Context, q store.Q, h *Hook) ([]*Hook, error) {
	if err := s.lockTarget(ctx, q, h); err != nil || h.IsApp() {
		return nil, err
	}
	query := repoHooksQuery
	switch {
	case h.Global:
		query = globalHooksQuery
	case h.IsOrg():
		query = orgHooksQuery
	}
	all, err := queryHooks(ctx, q, query, h.TargetID())
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(all, func(o *Hook) bool { return o.ID == h.ID }), nil
}

// nullID is an optional id column's value: NULL for 0.
func nullID(id int64) any {
	if id == 0 {
		return nil
	}
	return id
}

func eventsJSON(events []string) string {
	b, _ := json.Marshal(normalEvents(events))
	return string(b)
}

// storeNewHook stores a new hook and sets its id and timestamps.
func storeNewHook(ctx context.Context, q store.Q, h *Hook, now time.Time) error {
	h.CreatedAt, h.UpdatedAt = now, now
	err := q.QueryRowContext(ctx, `INSERT INTO hooks (repo_id, org_id, name, active, events, url, content_type,
		insecure_ssl, secret, username, password, app_id, creator_id, created_at, updated_at, global)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16) RETURNING id`,
		nullID(h.RepoID), nullID(h.OrgID), h.Name, h.Active, eventsJSON(h.Events), h.URL, h.ContentType,
		h.InsecureSSL, h.SealedSecret, h.Username, h.SealedPassword, nullID(h.AppID), nullID(h.CreatorID),
		now, now, h.Global).Scan(&h.ID)
	return store.Normalize(err)
}

// storeHook stores the editable fields of a hook and bumps updated_at.
func storeHook(ctx context.Context, q store.Q, h *Hook, now time.Time) error {
	h.UpdatedAt = now
	_, err := q.ExecContext(ctx, `UPDATE hooks SET active = $1, events = $2, url = $3, content_type = $4,
		insecure_ssl = $5, secret = $6, username = $7, password = $8, updated_at = $9 WHERE id = $10`,
		h.Active, eventsJSON(h.Events), h.URL, h.ContentType, h.InsecureSSL, h.SealedSecret, h.Username,
		h.SealedPassword, now, h.ID)
	return store.Normalize(err)
}

// CreateHook validates and stores a new hook of the target from a POST body,
// and writes its ping delivery in the same transaction.
func (s *Service) CreateHook(ctx context.Context, t target, b *hookBody, appID int64, sender *accounts.Account) (*Hook, error) {
	h := newHook(t, appID, sender.ID)
	if err := s.applyBody(h, b, true); err != nil {
		return nil, err
	}
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		others, err := s.targetHooks(ctx, tx, h)
		if err != nil {
			return err
		}
		if err := checkRules(h, others); err != nil {
			return err
		}
		if err := storeNewHook(ctx, tx, h, s.now()); err != nil {
			return err
		}
		if err := audit(ctx, tx, h, "hook.create"); err != nil {
			return err
		}
		return s.EnqueuePing(ctx, tx, h, sender)
	})
	if err != nil {
		return nil, err
	}
	return h, nil
}

// EditHook applies edit to a stored hook (re-read in the transaction),
// checks the result as on creation and stores it.
func (s *Service) EditHook(ctx context.Context, id int64, edit func(h *Hook) error) (*Hook, error) {
	var out *Hook
	err := s.DB.Tx(ctx, func(tx *store.Tx) error {
		h, err := HookByID(ctx, tx, id)
		if err != nil {
			return err
		}
		// Read it again under the target's lock: concurrent edits apply in turn.
		if err := s.lockTarget(ctx, tx, h); err != nil {
			return err
		}
		if h, err = HookByID(ctx, tx, id); err != nil {
			return err
		}
		if h.DeletedAt != nil {
			return apierr.NotFound()
		}
		if err := edit(h); err != nil {
			return err
		}
		others, err := s.targetHooks(ctx, tx, h)
		if err != nil {
			return err
		}
		if err := checkRules(h, others); err != nil {
			return err
		}
		out = h
		if err := storeHook(ctx, tx, h, s.now()); err != nil {
			return err
		}
		return audit(ctx, tx, h, "hook.config_changed")
	})
	if errors.Is(err, store.ErrNotFound) {
		return nil, apierr.NotFound()
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}

// DeleteHook soft-deletes a hook and writes its meta delivery (none for a
// global webhook) in the same transaction. A hook already deleted is 404.
func (s *Service) DeleteHook(ctx context.Context, h *Hook, sender *accounts.Account) error {
	return s.DB.Tx(ctx, func(tx *store.Tx) error {
		now := s.now()
		res, err := tx.ExecContext(ctx, `UPDATE hooks SET deleted_at = $1 WHERE id = $2 AND deleted_at IS NULL`, now, h.ID)
		if err != nil {
			return store.Normalize(err)
		}
		if n, err := res.RowsAffected(); err != nil || n == 0 {
			if err != nil {
				return err
			}
			return apierr.NotFound()
		}
		h.DeletedAt = &now
		if err := audit(ctx, tx, h, "hook.destroy"); err != nil {
			return err
		}
		if h.Global {
			// The meta event describes repository, organization and app
			// hooks (its hook.events knows no user event): a global
			// webhook is deleted without one.
			return nil
		}
		return s.EnqueueMeta(ctx, tx, h, sender)
	})
}

// audit records a change of an organization's hook, or of a hook of one
// of its repositories, in the organization's audit log; apps' own hooks
// and the hooks of users' repositories are in none.
func audit(ctx context.Context, tx store.Q, h *Hook, action string) error {
	if h.IntegrationID != 0 || h.Global {
		return nil
	}
	e := auditlog.Entry{OrgID: h.OrgID, Action: action,
		Data: map[string]any{"hook_id": h.ID, "name": h.Name, "active": h.Active, "content_type": h.ContentType}}
	if h.RepoID != 0 {
		r, err := repos.ByID(ctx, tx, h.RepoID)
		if err != nil || !r.Owner.IsOrg() {
			return err
		}
		e.OrgID, e.Repo = r.Owner.ID, r.Owner.Login+"/"+r.Name
	}
	return auditlog.Record(ctx, tx, e)
}

// hookConfigJSON is a hook's config as responses show it: secrets masked,
// and absent when not set.
type hookConfigJSON struct {
	ContentType string `json:"content_type"`
	InsecureSSL string `json:"insecure_ssl"`
	URL         string `json:"url"`
	Secret      string `json:"secret,omitempty"`
	Username    string `json:"username,omitempty"`
	Password    string `json:"password,omitempty"`
}

func configJSON(h *Hook) hookConfigJSON {
	c := hookConfigJSON{ContentType: h.ContentType, InsecureSSL: h.InsecureSSL, URL: h.URL, Username: h.Username}
	if h.SealedSecret != "" {
		c.Secret = masked
	}
	if h.SealedPassword != "" {
		c.Password = masked
	}
	return c
}

// lastResponseJSON is a repository hook's last_response.
type lastResponseJSON struct {
	Code    *int    `json:"code"`
	Status  string  `json:"status"`
	Message *string `json:"message"`
}

// orgHookJSON is the organization hook shape.
type orgHookJSON struct {
	Type          string         `json:"type"`
	ID            int64          `json:"id"`
	URL           string         `json:"url"`
	PingURL       string         `json:"ping_url"`
	DeliveriesURL string         `json:"deliveries_url"`
	Name          string         `json:"name"`
	Events        []string       `json:"events"`
	Active        bool           `json:"active"`
	Config        hookConfigJSON `json:"config"`
	UpdatedAt     wire.Time      `json:"updated_at"`
	CreatedAt     wire.Time      `json:"created_at"`
}

// globalHookJSON is the global webhook shape.
type globalHookJSON struct {
	Type      string         `json:"type"`
	ID        int64          `json:"id"`
	URL       string         `json:"url"`
	PingURL   string         `json:"ping_url"`
	Name      string         `json:"name"`
	Events    []string       `json:"events"`
	Active    bool           `json:"active"`
	Config    hookConfigJSON `json:"config"`
	UpdatedAt wire.Time      `json:"updated_at"`
	CreatedAt wire.Time      `json:"created_at"`
}

// repoHookJSON is the repository hook shape.
type repoHookJSON struct {
	Type          string            `json:"type"`
	ID            int64             `json:"id"`
	Name          string            `json:"name"`
	Active        bool              `json:"active"`
	Events        []string          `json:"events"`
	Config        hookConfigJSON    `json:"config"`
	UpdatedAt     wire.Time         `json:"updated_at"`
	CreatedAt     wire.Time         `json:"created_at"`
	URL           string            `json:"url"`
	TestURL       string            `json:"test_url"`
	PingURL       string            `json:"ping_url"`
	DeliveriesURL string            `json:"deliveries_url"`
	LastResponse  *lastResponseJSON `json:"last_response"`
}

// toHookJSON renders a hook whose API URL is hookURL
// (".../repos/o/r/hooks/ID" or ".../orgs/o/hooks/ID").
func toHookJSON(hookURL string, h *Hook, now time.Time) any {
	if h.Global {
		return globalHookJSON{Type: "Global", ID: h.ID, URL: hookURL, PingURL: hookURL + "/pings", Name: h.Name,
			Events: normalEvents(h.Events), Active: h.Active, Config: configJSON(h), UpdatedAt: wire.T(h.UpdatedAt),
			CreatedAt: wire.T(h.CreatedAt)}
	}
	if h.IsOrg() {
		return orgHookJSON{Type: "Organization", ID: h.ID, URL: hookURL, PingURL: hookURL + "/pings",
			DeliveriesURL: hookURL + "/deliveries", Name: h.Name, Events: normalEvents(h.Events), Active: h.Active,
			Config: configJSON(h), UpdatedAt: wire.T(h.UpdatedAt), CreatedAt: wire.T(h.CreatedAt)}
	}
	return repoHookJSON{Type: "Repository", ID: h.ID, Name: h.Name, Active: h.Active, Events: normalEvents(h.Events),
		Config: configJSON(h), UpdatedAt: wire.T(h.UpdatedAt), CreatedAt: wire.T(h.CreatedAt), URL: hookURL,
		TestURL: hookURL + "/tests", PingURL: hookURL + "/pings", DeliveriesURL: hookURL + "/deliveries",
		LastResponse: lastResponse(h.LastResponse, now)}
}

// lastResponse is "unused" before any delivery, null when the latest one
// is older than 30 days, and the latest one's outcome otherwise.
func lastResponse(l LastResponse, now time.Time) *lastResponseJSON {
	if l.Status == "" {
		return &lastResponseJSON{Status: "unused"}
	}
	if l.At != nil && now.Sub(*l.At) > lastResponseTTL {
		return nil
	}
	return &lastResponseJSON{Code: l.Code, Status: l.Status, Message: l.Message}
}

// hookURL is the API URL of a hook of the target under base.
func hookURL(base string, t target, id int64) string {
	if t.Global {
		return base + "/admin/hooks/" + strconv.FormatInt(id, 10)
	}
	if t.AppID != 0 {
		return base + "/app/hook"
	}
	if t.Repo != nil {
		return base + "/repos/" + t.Repo.FullName() + "/hooks/" + strconv.FormatInt(id, 10)
	}
	return base + "/orgs/" + t.Org.Login + "/hooks/" + strconv.FormatInt(id, 10)
}

// HookJSON is the hook as the API shows it (repository or organization
// shape), also the "hook" object of ping and meta payloads. Its links use
// BaseURL and the target's current name, read through q (the caller's
// transaction, when it has one); should that fail (the target is gone),
// they name the target by id.
func (s *Service) HookJSON(ctx context.Context, q store.Q, h *Hook) any {
	t, err := s.hookTarget(ctx, q, h)
	u := ""
	if err != nil {
		s.logger().Warn("webhooks: hook target lookup", "hook", h.ID, "err", err)
		u = s.BaseURL + "/repositories/" + strconv.FormatInt(h.RepoID, 10) + "/hooks/" + strconv.FormatInt(h.ID, 10)
		if h.IsOrg() {
			u = s.BaseURL + "/organizations/" + strconv.FormatInt(h.OrgID, 10) + "/hooks/" + strconv.FormatInt(h.ID, 10)
		}
	} else {
		u = hookURL(s.BaseURL, t, h.ID)
	}
	return toHookJSON(u, h, s.now())
}

// hookTarget loads the repository or organization of a hook, or names
// its app.
func (s *Service) hookTarget(ctx context.Context, q store.Q, h *Hook) (target, error) {
	if h.Global {
		return target{Global: true}, nil
	}
	if h.IsApp() {
		return target{AppID: h.IntegrationID}, nil
	}
	if h.IsOrg() {
		org, err := accounts.ByID(ctx, q, h.OrgID)
		return target{Org: org}, err
	}
	repo, err := repos.ByID(ctx, q, h.RepoID)
	return target{Repo: repo}, err
}
