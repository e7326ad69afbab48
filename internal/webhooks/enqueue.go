package webhooks

import (
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"forgeapi/internal/accounts"
	"forgeapi/internal/auth"
	"forgeapi/internal/events"
	"forgeapi/internal/repos"
	"forgeapi/internal/store"
	"forgeapi/internal/wire"
)

// payload is one stored webhook payload: the body of every delivery of
// one event (and of their redeliveries).
type payload struct {
	GUID         string
	Event        string
	Action       string
	RepositoryID *int64
	Body         []byte
	CreatedAt    time.Time
	// Outbox is set on a payload whose deliveries are handed over to a
	// dispatcher unwritten (see handoff): its hook_outboxes row.
	Outbox *outbox
}

// outbox is the hook_outboxes row of a payload whose deliveries are
// handed over unwritten: the hooks, the dispatcher's lease owner and the
// lease's end.
type outbox struct {
	HookIDs []int64
	Owner   string
	Until   time.Time
}

// hookList is the outbox's text of the hooks: their ids, comma-separated.
func hookList(ids []int64) string {
	b := make([]byte, 0, len(ids)*8)
	for i, id := range ids {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, id, 10)
	}
	return string(b)
}

// parseHookList reads the outbox's text; it skips what is not an id.
func parseHookList(s string) []int64 {
	var ids []int64
	for field := range strings.SplitSeq(s, ",") {
		if id, err := strconv.ParseInt(field, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	return ids
}

// newDelivery is a delivery row about to be written.
type newDelivery struct {
	HookID         int64
	PayloadID      int64
	GUID           string
	Event          string
	Action         string
	Redelivery     bool
	RepositoryID   *int64
	InstallationID *int64 // deliveries to an app's webhook
	URL            string
	RetriesLeft    int
	DueAt          time.Time
	CreatedAt      time.Time
	// LeaseOwner and Attempts are set on a delivery written leased, to
	// be handed over (see handoff): attempts counts that first claim.
	LeaseOwner string
	Attempts   int
}

// HandleEvent is the events sink. For an event with a HookEvent it
// stores the payload once and one pending delivery per subscribed hook
// of the event's repository and organization, and, for each app
// installation that receives it (appRecipients), a payload naming the
// installation and a delivery to the app's webhook; all in tx, and it
// wakes the dispatcher after commit for those not handed over to it. A
// push payload is stored even when no hook receives it: the tests
// endpoint re-sends a repository's latest push. A payload over the cap
// (Config.MaxPayloadBytes) is neither stored nor delivered (the platform
// drops it too); a warning logs the drop.
func (s *Service) HandleEvent(ctx context.Context, tx *store.Tx, e *events.Event) error {
	if e.HookEvent == "" {
		return nil
	}
	var hooks []*Hook
	if e.ToApp == nil {
		var err error
		if hooks, err = s.subscribedHooks(ctx, tx, e.Repo, e.Org, e.HookEvent); err != nil {
			return err
		}
	}
	apps, err := s.appRecipients(ctx, tx, e)
	if err != nil {
		return err
	}
	if len(hooks) == 0 && len(apps) == 0 && (e.HookEvent != "push" || e.ToApp != nil) {
		return nil
	}
	body, err := s.eventPayload(ctx, tx, e)
	if err != nil {
		return err
	}
	due := 0
	if e.ToApp == nil && (len(hooks) > 0 || e.HookEvent == "push") {
		if due, err = s.enqueueHookDeliveries(ctx, tx, e, body, hooks); err != nil {
			return err
		}
	}
	n, err := s.enqueueAppDeliveries(ctx, tx, e, body, apps)
	if due+n > 0 {
		tx.AfterCommit(s.Wake)
	}
	return err
}

// enqueueHookDeliveries stores body as the event's payload and lists the
// repository and organization hooks that receive it in the payload's
// outbox, whose deliveries the dispatcher writes once, with their
// outcomes: handed over to it when it is caught up (see handoff), the
// outbox leased to it; otherwise the outbox's lease ends at once, for a
// claim (see claimOutboxes). It reports how many deliveries wait for a
// claim.
func (s *Service) enqueueHookDeliveries(ctx context.Context, tx *store.Tx, e *events.Event, body map[string]any, hooks []*Hook) (int, error) {
	encoded, err := json.Marshal(body)
	if err != nil {
		return 0, fmt.Errorf("encode %s payload: %w", e.HookEvent, err)
	}
	if s.overCap(ctx, e.HookEvent, e.Repo, len(encoded), len(hooks)) {
		return 0, nil
	}
	p := s.newPayload(e, encoded)
	now := s.now()
	owner, leaseEnd, leased := s.handoff.leaseFor(now)
	if len(hooks) > 0 {
		ids := make([]int64, len(hooks))
		for i, h := range hooks {
			ids[i] = h.ID
		}
		p.Outbox = &outbox{HookIDs: ids, Owner: owner, Until: leaseEnd}
		if !leased {
			p.Outbox.Owner, p.Outbox.Until = "", now
		}
	}
	payloadID, err := insertPayload(ctx, tx, p)
	if err != nil {
		return 0, err
	}
	if !leased || len(hooks) == 0 {
		return len(hooks), nil
	}
	items := make([]handed, len(hooks))
	for i, h := range hooks {
		d := s.deliveryOf(h, payloadID, p)
		items[i] = handed{claimed: claimed{HookID: d.HookID, PayloadID: d.PayloadID, GUID: d.GUID, Event: d.Event,
			Action: d.Action, RepositoryID: d.RepositoryID, RetriesLeft: d.RetriesLeft, CreatedAt: d.CreatedAt},
			hook: h, body: encoded}
	}
	s.handOver(tx, owner, items)
	return 0, nil
}

// newPayload is the payload row of e with the encoded body.
func (s *Service) newPayload(e *events.Event, body []byte) payload {
	p := payload{GUID: wire.NewGUID(), Event: e.HookEvent, Action: actionOf(e.HookPayload), Body: body, CreatedAt: e.CreatedAt}
	if e.Repo != nil {
		p.RepositoryID = &e.Repo.ID
	}
	return p
}

// overCap reports whether a payload of size bytes is over the cap, and
// logs the event it drops then.
func (s *Service) overCap(ctx context.Context, event string, repo *repos.Repository, size, hooks int) bool {
	if size <= s.maxPayloadBytes() {
		return false
	}
	attrs := []any{"event", event, "payload_bytes", size, "max_payload_bytes", s.maxPayloadBytes(), "hooks", hooks}
	if repo != nil {
		attrs = append(attrs, "repository_id", repo.ID)
	}
	s.logger().WarnContext(ctx, "webhook payload over the cap: not delivered", attrs...)
	return true
}

// deliveryOf is the first delivery of payload p (stored as payloadID) to h.
func (s *Service) deliveryOf(h *Hook, payloadID int64, p payload) newDelivery {
	now := s.now()
	return newDelivery{HookID: h.ID, PayloadID: payloadID, GUID: p.GUID, Event: p.Event, Action: p.Action,
		RepositoryID: p.RepositoryID, URL: h.URL, RetriesLeft: max(s.Config.Retries, 0), DueAt: now, CreatedAt: now}
}

// eventPayload is the webhook payload of e: its HookPayload plus
// repository, organization and sender (unless the emitter set them).
func (s *Service) eventPayload(ctx context.Context, q store.Q, e *events.Event) (map[string]any, error) {
	body := make(map[string]any, len(e.HookPayload)+4)
	maps.Copy(body, e.HookPayload)
	if e.Repo != nil && body["repository"] == nil {
		repo, err := s.repositoryJSON(ctx, q, e.Repo)
		if err != nil {
			return nil, err
		}
		body["repository"] = repo
		if e.HookEvent == "team" { // its schema types repository.organization as a string, go-github as an object: left out
			repo.Organization = nil
			body["repository"] = repo
		}
		if e.HookEvent == "push" && repo.Organization != nil {
			body["repository"] = pushRepositoryJSON{JSON: repo, Organization: repo.Organization.Login}
		}
	}
	if e.Org != nil && body["organization"] == nil {
		body["organization"] = accounts.ToSimpleOrg(s.BaseURL, e.Org)
	}
	if e.Actor != nil && body["sender"] == nil {
		body["sender"] = accounts.ToSimpleUser(s.BaseURL, e.Actor)
	}
	return body, nil
}

// pushRepositoryJSON is the repository of a push payload, which names
// its organization by login (a string, as go-github's PushEventRepository
// and octokit's push schema read it) rather than as an object.
type pushRepositoryJSON struct {
	repos.JSON
	Organization string `json:"organization,omitempty"`
}

func (s *Service) repositoryJSON(ctx context.Context, q store.Q, r *repos.Repository) (repos.JSON, error) {
	st, err := repos.StatsOf(ctx, q, r.ID)
	if err != nil {
		return repos.JSON{}, err
	}
	return repos.ToJSON(repos.URLs{Base: s.BaseURL, SSHPort: s.SSHPort}, r, st, auth.RoleNone), nil
}

func actionOf(fields map[string]any) string {
	action, _ := fields["action"].(string)
	return action
}

// EnqueuePing writes a ping delivery to the hook in tx (on creation and
// from the pings endpoint) and wakes the dispatcher after commit.
func (s *Service) EnqueuePing(ctx context.Context, tx *store.Tx, h *Hook, sender *accounts.Account) error {
	return s.enqueueHookEvent(ctx, tx, h, sender, "ping", map[string]any{"zen": zen()})
}

// EnqueueMeta writes the meta ("deleted") delivery of a hook being
// deleted in tx and wakes the dispatcher after commit. The dispatcher
// sends it although the hook is deleted by then.
func (s *Service) EnqueueMeta(ctx context.Context, tx *store.Tx, h *Hook, sender *accounts.Account) error {
	return s.enqueueHookEvent(ctx, tx, h, sender, "meta", map[string]any{"action": "deleted"})
}

// enqueueHookEvent writes a delivery of an event about the hook itself
// (ping, meta): fields plus hook_id, hook, the hook's repository or
// organization, and sender.
func (s *Service) enqueueHookEvent(ctx context.Context, tx *store.Tx, h *Hook, sender *accounts.Account, event string, fields map[string]any) error {
	fields["hook_id"] = h.ID
	fields["hook"] = s.HookJSON(ctx, tx, h)
	if sender != nil {
		fields["sender"] = accounts.ToSimpleUser(s.BaseURL, sender)
	}
	p := payload{GUID: wire.NewGUID(), Event: event, Action: actionOf(fields), CreatedAt: s.now()}
	switch {
	case h.Global: // about the installation: no repository or organization
	case h.IsOrg():
		org, err := accounts.ByID(ctx, tx, h.OrgID)
		if err != nil {
			return err
		}
		fields["organization"] = accounts.ToSimpleOrg(s.BaseURL, org)
	default:
		repo, err := repos.ByID(ctx, tx, h.RepoID)
		if err != nil {
			return err
		}
		if fields["repository"], err = s.repositoryJSON(ctx, tx, repo); err != nil {
			return err
		}
		p.RepositoryID = &repo.ID
	}
	var err error
	if p.Body, err = json.Marshal(fields); err != nil {
		return fmt.Errorf("encode %s payload: %w", event, err)
	}
	payloadID, err := insertPayload(ctx, tx, p)
	if err != nil {
		return err
	}
	if err := insertDelivery(ctx, tx, s.deliveryOf(h, payloadID, p)); err != nil {
		return err
	}
	tx.AfterCommit(s.Wake)
	return nil
}

// zens are the sayings of ping payloads.
var zens = [...]string{
	"Design for failure.", "Keep it logically awesome.", "Speak like a human.",
	"Responsive is better than fast.", "Anything added dilutes everything else.",
	"Practicality beats purity.", "Approachable is better than simple.",
	"Mind your words, they are important.", "Non-blocking is better than blocking.",
	"Encourage flow.", "Half measures are as bad as nothing at all.",
	"Favor focus over features.", "Avoid administrative distraction.", "It's not fully shipped until it's fast.",
}

func zen() string { return zens[rand.IntN(len(zens))] }

func insertPayload(ctx context.Context, tx store.Q, p payload) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `
		INSERT INTO hook_payloads (guid, event, action, repository_id, payload, created_at)
		VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
		p.GUID, p.Event, p.Action, p.RepositoryID, string(p.Body), p.CreatedAt).Scan(&id)
	if err != nil || p.Outbox == nil {
		return id, store.Normalize(err)
	}
	_, err = tx.ExecContext(ctx, `INSERT INTO hook_outboxes (payload_id, hooks, owner, lease_until) VALUES ($1, $2, $3, $4)`,
		id, hookList(p.Outbox.HookIDs), p.Outbox.Owner, p.Outbox.Until)
	return id, store.Normalize(err)
}

func insertDelivery(ctx context.Context, tx store.Q, d newDelivery) error {
	_, err := insertDeliveries(ctx, tx, []newDelivery{d})
	return err
}

// insertRowsPerStatement is how many deliveries one INSERT writes: an
// event's deliveries to its hooks go in one statement (a few past 64
// hooks), whose texts, one per row count up to this, stay in the
// statement cache. 64 rows are 768 parameters, far below SQLite's and
// PostgreSQL's limits; at 16, an event to 40 hooks took three statements.
const insertRowsPerStatement = 64

// insertDeliveryQueries are the INSERT texts by row count (index n-1).
var insertDeliveryQueries = func() (q [insertRowsPerStatement]string) {
	const head = `INSERT INTO hook_deliveries (hook_id, payload_id, guid, event, action, redelivery, repository_id,
			installation_id, url, retries_left, due_at, created_at, lease_owner, attempts) VALUES `
	for n := 1; n <= insertRowsPerStatement; n++ {
		q[n-1] = head + valueRows(n, insertDeliveryColumns, 1, nil, "") + " RETURNING id, hook_id"
	}
	return q
}()

// valueRows renders n rows of a VALUES list of cols parameters each,
// numbered from first: "($1, $2), ($3, $4)". types, when given, are the
// columns' types, written on the first row (PostgreSQL reads untyped
// parameters of a VALUES list as text); tail ends each row with
// constants.
func valueRows(n, cols, first int, types []string, tail string) string {
	var b strings.Builder
	for r := range n {
		if r > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for c := range cols {
			if c > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "$%d", first+r*cols+c)
			if r == 0 && types != nil {
				b.WriteString("::" + types[c])
			}
		}
		b.WriteString(tail + ")")
	}
	return b.String()
}

// insertDeliveryColumns is the number of columns insertDeliveries writes.
const insertDeliveryColumns = 14

// insertDeliveries writes the deliveries, up to insertRowsPerStatement
// in one statement, and returns their ids in the order of rows. The
// database returns an INSERT's rows in no promised order, so each id
// goes to the first row not yet given one with the same hook: rows of
// one call go to distinct hooks, or are returned in order.
func insertDeliveries(ctx context.Context, tx store.Q, rows []newDelivery) ([]int64, error) {
	ids := make([]int64, len(rows))
	for start := 0; start < len(rows); start += insertRowsPerStatement {
		chunk := rows[start:min(len(rows), start+insertRowsPerStatement)]
		args := make([]any, 0, len(chunk)*insertDeliveryColumns)
		for _, d := range chunk {
			args = append(args, d.HookID, d.PayloadID, d.GUID, d.Event, d.Action, d.Redelivery, d.RepositoryID,
				d.InstallationID, d.URL, d.RetriesLeft, d.DueAt, d.CreatedAt, d.LeaseOwner, d.Attempts)
		}
		returned, err := tx.QueryContext(ctx, insertDeliveryQueries[len(chunk)-1], args...)
		if err != nil {
			return nil, store.Normalize(err)
		}
		if err := assignIDs(returned, chunk, ids[start:]); err != nil {
			return nil, store.Normalize(err)
		}
	}
	return ids, nil
}

// assignIDs reads an INSERT's returned (id, hook_id) rows into ids, the
// ids of chunk (see insertDeliveries).
func assignIDs(rows *sql.Rows, chunk []newDelivery, ids []int64) error {
	defer rows.Close()
	for rows.Next() {
		var id, hookID int64
		if err := rows.Scan(&id, &hookID); err != nil {
			return err
		}
		for i, d := range chunk {
			if ids[i] == 0 && d.HookID == hookID {
				ids[i] = id
				break
			}
		}
	}
	return rows.Err()
}
