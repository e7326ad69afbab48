package webhooks

import (
	"cmp"
	"context"
	"maps"
	"slices"
	"time"

	"forgeapi/internal/store"
)

// Recording: outcomes written in batches, with the hooks' last responses
// and the automatic retries. The hand-off's contract is Dispatcher's.

// recordLoop records outcomes in batches until results is closed. The
// batch's array is reused: made anew for every batch (256 outcomes of a
// few hundred bytes, most batches holding a handful), it was a tenth of
// the process's allocated bytes in the webhooks bench.
func (d *Dispatcher) recordLoop(results <-chan outcome) {
	batch := make([]outcome, 0, recordBatch)
	for first := range results {
		clear(batch) // drop the last batch's hooks and payloads
		batch = append(batch[:0], first)
	fill:
		for len(batch) < recordBatch {
			select {
			case o, ok := <-results:
				if !ok {
					break fill
				}
				batch = append(batch, o)
			default:
				break fill
			}
		}
		d.recordPatiently(batch)
	}
}

// recordPatiently records a batch of outcomes, trying again for up to
// recordPatience when the database fails, and keeps this dispatcher's
// leases from ending meanwhile: a delivery whose lease ends is claimed
// and sent again, so an outcome received must not be dropped by a passing
// database error. Only when the database fails for longer do the
// deliveries stay leased, to be sent again when the lease ends.
func (d *Dispatcher) recordPatiently(batch []outcome) {
	deadline := time.Now().Add(recordPatience)
	wait := 50 * time.Millisecond
	for {
		err := d.record(batch)
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			// Those handed over unwritten keep their payloads' outboxes,
			// claimed again once the lease ends.
			d.svc.logger().Error("record webhook deliveries; they are sent again when their lease ends",
				"count", len(batch), "err", err)
			return
		}
		d.svc.logger().Warn("record webhook deliveries; trying again", "count", len(batch), "err", err)
		if err := d.extendLeases(); err != nil {
			d.svc.logger().Warn("extend webhook delivery leases", "err", err)
		}
		time.Sleep(wait)
		wait = min(2*wait, 2*time.Second)
	}
}

// extendLeases moves the end of every lease this dispatcher holds to a
// full lease from now.
func (d *Dispatcher) extendLeases() error {
	ctx := context.Background()
	return d.svc.DB.RetryTx(ctx, func(tx *store.Tx) error {
		until := d.svc.now().Add(d.lease)
		_, err := tx.ExecContext(ctx, `UPDATE hook_deliveries SET due_at = $1 WHERE lease_owner = $2 AND state = 'pending'`,
			until, d.owner)
		if err != nil {
			return store.Normalize(err)
		}
		_, err = tx.ExecContext(ctx, `UPDATE hook_outboxes SET lease_until = $1 WHERE owner = $2`, until, d.owner)
		return store.Normalize(err)
	})
}

// record writes a batch of outcomes in one transaction: the deliveries
// (only while this dispatcher still holds their lease), their hooks'
// last_response, and the automatic retries of failures. Rows are written
// in id order (deliveries, then hooks), so that the recorders of several
// servers on one PostgreSQL database lock shared hook rows in the same
// order; a transaction PostgreSQL still aborts (deadlock, serialization
// failure) runs again. Recording is idempotent: a delivery already done,
// or leased by another claimer, is left alone and gets no retry.
func (d *Dispatcher) record(batch []outcome) error {
	ctx := context.Background()
	// In id order, through pointers: a clone of the outcomes (each a few
	// hundred bytes) to sort was a tenth of recording's CPU.
	order := make([]*outcome, len(batch))
	for i := range batch {
		order[i] = &batch[i]
	}
	slices.SortFunc(order, func(a, b *outcome) int { return cmp.Compare(a.ID, b.ID) })
	counts := unwrittenCounts(batch)
	err := d.svc.DB.RetryTx(ctx, func(tx *store.Tx) error {
		kept, err := d.writeOutcomes(ctx, tx, order, counts)
		if err != nil {
			return err
		}
		latest := map[int64]outcome{}
		retried := false
		for i, p := range order {
			o := *p
			if !kept[i] || o.skip != "" {
				continue
			}
			if prev, ok := latest[o.HookID]; !ok || !o.at.Before(prev.at) {
				latest[o.HookID] = o
			}
			if !o.result.OK() && o.RetriesLeft > 0 {
				if err := d.retry(ctx, tx, o); err != nil {
					return err
				}
				retried = true
			}
		}
		for _, hookID := range slices.Sorted(maps.Keys(latest)) {
			if err := recordLastResponse(ctx, tx, hookID, latest[hookID]); err != nil {
				return err
			}
		}
		if retried {
			tx.AfterCommit(d.svc.Wake)
		}
		return nil
	})
	if err == nil {
		d.svc.handoff.written(counts)
	}
	return err
}

// writeOutcomes writes the outcomes of a batch (in id order) in tx: a
// claimed delivery's row is marked done with it, an unwritten one's row
// is inserted done with it (those of a batch in a few statements) while
// its payload's outbox is held and its hook exists. kept[i] reports
// whether order[i] was written: false when the lease was lost (another
// claimer owns the row or the outbox now) or the hook is gone.
func (d *Dispatcher) writeOutcomes(ctx context.Context, tx store.Q, order []*outcome, counts map[int64]int) (kept []bool, err error) {
	kept = make([]bool, len(order))
	var unwritten, claimed []*outcome
	for _, o := range order {
		if o.ID == 0 {
			unwritten = append(unwritten, o)
		} else {
			claimed = append(claimed, o)
		}
	}
	if len(claimed) > 0 {
		written, err := d.recordClaimed(ctx, tx, claimed)
		if err != nil {
			return nil, err
		}
		for i, o := range order {
			kept[i] = o.ID != 0 && written[o.ID]
		}
	}
	if len(unwritten) == 0 {
		return kept, nil
	}
	held, err := d.svc.holdOutboxes(ctx, tx, d.owner, counts)
	if err != nil {
		return nil, err
	}
	hooks, err := existingHooks(ctx, tx, unwritten)
	if err != nil {
		return nil, err
	}
	var rows []*outcome
	for i, o := range order {
		if o.ID == 0 && held[o.PayloadID] && hooks[o.HookID] {
			kept[i] = true
			rows = append(rows, o)
		}
	}
	return kept, insertOutcomes(ctx, tx, rows)
}

// doneColumns is the number of parameters of one row of doneQueries.
const doneColumns = 10

// doneQueries are, per dialect, the UPDATE texts that mark claimed
// deliveries done with their outcomes, by row count (index n-1): the
// outcomes are a VALUES list ($1 is the lease owner), whose first row
// carries the columns' types on PostgreSQL, which would read untyped
// parameters as text.
var doneQueries = map[store.Dialect][outcomesPerStatement]string{
	store.SQLite:   buildDoneQueries(nil),
	store.Postgres: buildDoneQueries([]string{"bigint", "timestamptz", "double precision", "text", "integer", "text", "text", "smallint", "text", "text"}),
}

func buildDoneQueries(types []string) (q [outcomesPerStatement]string) {
	const head = `UPDATE hook_deliveries SET state = 'done', lease_owner = '', delivered_at = v.column2, duration = v.column3,
		status = v.column4, status_code = v.column5, url = v.column6, request_headers = v.column7,
		implied_headers = v.column8, response_headers = v.column9, response_body = v.column10
		FROM (VALUES `
	const tail = `) AS v
		WHERE hook_deliveries.id = v.column1 AND hook_deliveries.lease_owner = $1 AND hook_deliveries.state = 'pending'
		RETURNING hook_deliveries.id`
	for n := 1; n <= outcomesPerStatement; n++ {
		q[n-1] = head + valueRows(n, doneColumns, 2, types, "") + tail
	}
	return q
}

// recordClaimed marks claimed deliveries done with their outcomes, up to
// outcomesPerStatement in one statement, and reports those it wrote: a
// delivery whose lease was lost (another claimer owns the row now) is
// left alone. One UPDATE a delivery was 4.6% of the webhooks bench's CPU
// overloaded (-workers 32), where most deliveries are claimed.
func (d *Dispatcher) recordClaimed(ctx context.Context, tx store.Q, outcomes []*outcome) (map[int64]bool, error) {
	queries := doneQueries[d.svc.DB.Dialect]
	written := make(map[int64]bool, len(outcomes))
	for start := 0; start < len(outcomes); start += outcomesPerStatement {
		chunk := outcomes[start:min(len(outcomes), start+outcomesPerStatement)]
		args := make([]any, 0, 1+len(chunk)*doneColumns)
		args = append(args, d.owner)
		for _, o := range chunk {
			url := ""
			if o.hook != nil {
				url = o.hook.URL
			}
			args = append(args, o.ID, o.at, o.result.Duration.Seconds(), o.result.Status, o.result.StatusCode, url,
				o.requestHeaders, int64(o.impliedHeaders), o.responseHeaders, o.responseBody)
		}
		rows, err := tx.QueryContext(ctx, queries[len(chunk)-1], args...)
		if err != nil {
			return nil, store.Normalize(err)
		}
		for rows.Next() {
			var id int64
			if err := rows.Scan(&id); err != nil {
				rows.Close()
				return nil, err
			}
			written[id] = true
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, store.Normalize(err)
		}
	}
	return written, nil
}

// retry writes the automatic retry of a failed delivery: a new delivery
// with redelivery true, due after an exponential backoff with jitter.
func (d *Dispatcher) retry(ctx context.Context, tx store.Q, o outcome) error {
	attempt := max(d.svc.Config.Retries-o.RetriesLeft, 0)
	return insertDelivery(ctx, tx, newDelivery{HookID: o.HookID, PayloadID: o.PayloadID, GUID: o.GUID,
		Event: o.Event, Action: o.Action, Redelivery: true, RepositoryID: o.RepositoryID,
		InstallationID: o.InstallationID, URL: o.hook.URL, RetriesLeft: o.RetriesLeft - 1, DueAt: o.at.Add(d.backoff(attempt)), CreatedAt: o.at})
}

// recordLastResponse sets the hook's last_response from its newest
// outcome, unless a newer one was recorded already (another process).
func recordLastResponse(ctx context.Context, tx store.Q, hookID int64, o outcome) error {
	var code *int
	if o.result.StatusCode != 0 {
		code = &o.result.StatusCode
	}
	status := "active"
	if !o.result.OK() {
		status = "failed"
	}
	_, err := tx.ExecContext(ctx, `
		INSERT INTO hook_last_responses (hook_id, code, status, message, responded_at) VALUES ($1, $2, $3, $4, $5)
		ON CONFLICT (hook_id) DO UPDATE SET code = excluded.code, status = excluded.status, message = excluded.message,
			responded_at = excluded.responded_at
		WHERE hook_last_responses.responded_at <= excluded.responded_at`,
		hookID, code, status, o.result.Status, o.at)
	return store.Normalize(err)
}
