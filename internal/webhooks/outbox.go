package webhooks

import (
	"context"
	"database/sql"
	"errors"
	"maps"
	"slices"
	"time"

	"forgeapi/internal/store"
)

// Unwritten deliveries.
//
// An event's deliveries to hooks have no row in hook_deliveries at
// first: its payload's outbox (a hook_outboxes row) lists the hooks.
// Leased to the dispatcher, the deliveries are handed over to it (see
// handoff); with a lease that ended (the dispatcher was behind, or died)
// the outbox waits for a claim (claimOutboxes). The dispatcher writes
// each row once: done with its outcome when it was sent (record), or
// pending when it goes back to the table unsent (putBack: a busy hook,
// over a rate limit, a shutdown). Each such write first holds the
// payload's outbox (holdOutboxes), in the same transaction: a dispatcher
// whose lease ended, and whose outbox another claimer took, writes
// nothing, as a recorder whose lease ended updates no row. The write of a
// payload's last unwritten delivery deletes its outbox; an outbox left
// (the process died, or its writes raced) is claimed again once its lease
// ends, for the hooks that have no delivery of it yet.

// unwrittenRow is the row of the unwritten delivery c to the hook at url,
// put back due at due.
func (c claimed) unwrittenRow(url string, due time.Time) newDelivery {
	return newDelivery{HookID: c.HookID, PayloadID: c.PayloadID, GUID: c.GUID, Event: c.Event, Action: c.Action,
		RepositoryID: c.RepositoryID, InstallationID: c.InstallationID, URL: url, RetriesLeft: c.RetriesLeft,
		DueAt: due, CreatedAt: c.CreatedAt, Attempts: 1}
}

// holdOutboxes holds, in tx, the outboxes of the payloads whose unwritten
// deliveries the caller writes (counts: how many of each) and reports
// those owner still holds. The outbox of a payload whose remaining
// unwritten deliveries (see handoff) are all being written is deleted;
// the others are locked (PostgreSQL) for the transaction. Payloads are
// taken in id order, so that two writers lock them in the same order.
// (One statement per 32 payloads measured no better: a batch of the
// recorder holds few payloads, and deleting the rows is the cost.)
func (s *Service) holdOutboxes(ctx context.Context, tx store.Q, owner string, counts map[int64]int) (map[int64]bool, error) {
	held := make(map[int64]bool, len(counts))
	for _, id := range slices.Sorted(maps.Keys(counts)) {
		if counts[id] >= s.handoff.remaining(id) {
			res, err := tx.ExecContext(ctx, `DELETE FROM hook_outboxes WHERE payload_id = $1 AND owner = $2`, id, owner)
			if err != nil {
				return nil, store.Normalize(err)
			}
			n, err := res.RowsAffected()
			if err != nil {
				return nil, err
			}
			held[id] = n == 1
			continue
		}
		var one int
		err := tx.QueryRowContext(ctx, `SELECT 1 FROM hook_outboxes WHERE payload_id = $1 AND owner = $2`+s.DB.ForUpdate(),
			id, owner).Scan(&one)
		if err != nil && !errors.Is(err, sql.ErrNoRows) {
			return nil, store.Normalize(err)
		}
		held[id] = err == nil
	}
	return held, nil
}

// unwrittenCounts counts the unwritten deliveries (ID 0) of each payload
// among the outcomes.
func unwrittenCounts(batch []outcome) map[int64]int {
	counts := map[int64]int{}
	for i := range batch {
		if batch[i].ID == 0 {
			counts[batch[i].PayloadID]++
		}
	}
	return counts
}

// existingHooks reports which hooks of the outcomes still exist (a
// deleted repository takes its hooks, and their deliveries, with it).
func existingHooks(ctx context.Context, tx store.Q, outcomes []*outcome) (map[int64]bool, error) {
	ids := map[int64]bool{}
	for _, o := range outcomes {
		ids[o.HookID] = false
	}
	list := slices.Sorted(maps.Keys(ids))
	for start := 0; start < len(list); start += hooksPerLookup {
		chunk := list[start:min(len(list), start+hooksPerLookup)]
		args := make([]any, len(chunk))
		for i, id := range chunk {
			args[i] = id
		}
		if err := scanIDs(ctx, tx, existingHooksQueries[len(chunk)-1], args, func(id int64) { ids[id] = true }); err != nil {
			return nil, err
		}
	}
	return ids, nil
}

// hooksPerLookup is how many hooks one query of existingHooks looks up;
// existingHooksQueries are its texts by hook count (index n-1), constant
// so that each is prepared once: built for every batch, the query's
// parsing was most of its cost (1% of the CPU of a delivery).
const hooksPerLookup = 32

var existingHooksQueries = func() (q [hooksPerLookup]string) {
	for n := 1; n <= hooksPerLookup; n++ {
		q[n-1] = `SELECT id FROM hooks WHERE id IN ` + valueRows(1, n, 1, nil, "")
	}
	return q
}()

// scanIDs runs the query and calls found with the id of every row.
func scanIDs(ctx context.Context, tx store.Q, query string, args []any, found func(int64)) error {
	rows, err := tx.QueryContext(ctx, query, args...)
	if err != nil {
		return store.Normalize(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		if err := rows.Scan(&id); err != nil {
			return err
		}
		found(id)
	}
	return store.Normalize(rows.Err())
}

// outcomeColumns is the number of parameters of one row of
// insertOutcomeQueries; outcomesPerStatement the rows one INSERT writes.
const (
	outcomeColumns       = 19
	outcomesPerStatement = 32
)

// insertOutcomeQueries are the INSERT texts of unwritten deliveries done
// with their outcomes, by row count (index n-1).
var insertOutcomeQueries = func() (q [outcomesPerStatement]string) {
	const head = `INSERT INTO hook_deliveries (hook_id, payload_id, guid, event, action, repository_id, installation_id, url,
		retries_left, due_at, delivered_at, created_at, duration, status, status_code, request_headers, implied_headers,
		response_headers, response_body, attempts, state) VALUES `
	for n := 1; n <= outcomesPerStatement; n++ {
		q[n-1] = head + valueRows(n, outcomeColumns, 1, nil, ", 1, 'done'")
	}
	return q
}()

// insertOutcomes writes the rows of unwritten deliveries done with their
// outcomes, up to outcomesPerStatement in one statement.
func insertOutcomes(ctx context.Context, tx store.Q, outcomes []*outcome) error {
	for start := 0; start < len(outcomes); start += outcomesPerStatement {
		chunk := outcomes[start:min(len(outcomes), start+outcomesPerStatement)]
		args := make([]any, 0, len(chunk)*outcomeColumns)
		for _, o := range chunk {
			url := ""
			if o.hook != nil {
				url = o.hook.URL
			}
			args = append(args, o.HookID, o.PayloadID, o.GUID, o.Event, o.Action, o.RepositoryID, o.InstallationID, url,
				o.RetriesLeft, o.at, o.at, o.CreatedAt, o.result.Duration.Seconds(), o.result.Status, o.result.StatusCode,
				o.requestHeaders, int64(o.impliedHeaders), o.responseHeaders, o.responseBody)
		}
		if _, err := tx.ExecContext(ctx, insertOutcomeQueries[len(chunk)-1], args...); err != nil {
			return store.Normalize(err)
		}
	}
	return nil
}

// insertPutBack writes the pending row of an unwritten delivery put back
// until its due time, unless its hook is gone, and returns its id (0 when
// not written).
func insertPutBack(ctx context.Context, tx store.Q, d newDelivery, throttledAt *time.Time) (int64, error) {
	var id int64
	err := tx.QueryRowContext(ctx, `
		INSERT INTO hook_deliveries (hook_id, payload_id, guid, event, action, repository_id, installation_id, url,
			retries_left, due_at, created_at, attempts, throttled_at)
		SELECT $1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13
		WHERE EXISTS (SELECT 1 FROM hooks WHERE id = $1)
		RETURNING id`,
		d.HookID, d.PayloadID, d.GUID, d.Event, d.Action, d.RepositoryID, d.InstallationID, d.URL, d.RetriesLeft,
		d.DueAt, d.CreatedAt, d.Attempts, throttledAt).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return id, store.Normalize(err)
}

// maxOutboxClaim is how many outboxes one claim takes at most.
const maxOutboxClaim = 64

// expiredOutboxes finds the outboxes whose lease ended before $3, oldest
// lease first, at most $4 (a range of hook_outboxes_lease).
const expiredOutboxes = `SELECT payload_id FROM hook_outboxes WHERE lease_until <= $3 ORDER BY lease_until LIMIT $4`

// anyExpiredOutbox finds an outbox whose lease ended before $1: a look,
// outside a transaction, before a claim.
const anyExpiredOutbox = `SELECT payload_id FROM hook_outboxes WHERE lease_until <= $1 LIMIT 1`

// claimOutboxes leases to owner, until lease from now, up to limit
// outboxes whose lease ended, oldest first, and returns their deliveries
// unwritten, to be started as those handed over are: one to each listed
// hook that still exists and has no delivery of the payload. An outbox's
// lease ends at once when the API's transaction wrote it while no
// dispatcher took its deliveries (none ran, or it had a backlog), or when
// a dispatcher died with it; the deliveries a dead one logged are not
// sent again. An outbox left with no delivery to make is deleted. more
// reports that the claim took limit outboxes: there may be others.
func (s *Service) claimOutboxes(ctx context.Context, owner string, lease time.Duration, limit int) (items []handed, more bool, err error) {
	var ids []int64
	err = s.DB.Tx(ctx, func(tx *store.Tx) error {
		items, ids = nil, nil
		now := s.now()
		rows, err := tx.QueryContext(ctx, `UPDATE hook_outboxes SET owner = $1, lease_until = $2
			WHERE payload_id IN (`+expiredOutboxes+s.DB.SkipLocked()+`) RETURNING payload_id, hooks`,
			owner, now.Add(lease), now, limit)
		if err != nil {
			return store.Normalize(err)
		}
		var lists []string
		for rows.Next() {
			var id int64
			var list string
			if err := rows.Scan(&id, &list); err != nil {
				rows.Close()
				return err
			}
			ids, lists = append(ids, id), append(lists, list)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return store.Normalize(err)
		}
		for i, id := range ids {
			missing, err := s.outboxDeliveries(ctx, tx, id, parseHookList(lists[i]))
			if err != nil {
				return err
			}
			if len(missing) == 0 {
				if _, err := tx.ExecContext(ctx, `DELETE FROM hook_outboxes WHERE payload_id = $1`, id); err != nil {
					return store.Normalize(err)
				}
			}
			items = append(items, missing...)
		}
		return nil
	})
	if err != nil {
		return nil, false, err
	}
	// Deliveries this process held of them under an ended lease are no
	// longer counted: the outboxes are held anew, by these.
	s.handoff.forget(ids)
	return items, len(ids) == limit, nil
}

// outboxDeliveries are the deliveries of the payload to the hooks that
// have none of it and still exist, unwritten.
func (s *Service) outboxDeliveries(ctx context.Context, tx store.Q, payloadID int64, hookIDs []int64) ([]handed, error) {
	var p payload
	var repoID sql.NullInt64
	var body []byte // shared by the payload's deliveries, which only read it
	err := tx.QueryRowContext(ctx, `SELECT guid, event, action, repository_id, created_at, payload FROM hook_payloads WHERE id = $1`,
		payloadID).Scan(&p.GUID, &p.Event, &p.Action, &repoID, &p.CreatedAt, &body)
	if err != nil {
		return nil, store.Normalize(err)
	}
	p.RepositoryID = nullInt(repoID)
	logged, err := loggedHooks(ctx, tx, payloadID)
	if err != nil {
		return nil, err
	}
	var items []handed
	for _, hookID := range hookIDs {
		if logged[hookID] {
			continue
		}
		h, err := s.hookToSend(ctx, tx, hookID)
		if errors.Is(err, store.ErrNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		items = append(items, handed{claimed: claimed{HookID: hookID, PayloadID: payloadID, GUID: p.GUID, Event: p.Event,
			Action: p.Action, RepositoryID: p.RepositoryID, RetriesLeft: max(s.Config.Retries, 0), CreatedAt: p.CreatedAt},
			hook: h, body: body})
	}
	return items, nil
}

// loggedHooks are the hooks that have a delivery of the payload.
func loggedHooks(ctx context.Context, tx store.Q, payloadID int64) (map[int64]bool, error) {
	logged := map[int64]bool{}
	err := scanIDs(ctx, tx, `SELECT hook_id FROM hook_deliveries WHERE payload_id = $1`, []any{payloadID}, func(id int64) { logged[id] = true })
	return logged, err
}
