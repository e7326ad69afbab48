package store

import (
	"context"
	"database/sql"
	"sync/atomic"
	"time"
)

// checkpointInterval is the least time between two WAL checkpoints of the
// checkpointer: the frames committed meanwhile are copied back in one
// pass, so a page written by many transactions is copied once. The pages
// every write changes (the last pages of a table and of its indexes) were
// copied ten times a second at 100 ms; at 1 s the webhooks bench delivers
// about 5% more. With synchronous(NORMAL) a checkpoint is also when the
// WAL reaches the disk: a power loss (not a crash of the process, which
// loses nothing committed) can lose the commits of the last interval.
const checkpointInterval = time.Second

// checkpointer copies committed WAL frames back into a SQLite database
// file, off the writers' path. SQLite's own automatic checkpoint runs in
// the commit that crosses wal_autocheckpoint pages, with the write lock
// held and two fsyncs in it: every writer of the process waited for it
// (the webhooks bench measured commits at 852 µs on average with it, 347
// µs without). Connections are opened with wal_autocheckpoint(0), so
// commits never checkpoint, and this goroutine runs a PASSIVE checkpoint
// (which does not take the write lock, and copies only what no reader
// still needs) at most every checkpointInterval after a commit.
type checkpointer struct {
	db    *sql.DB
	kick  chan struct{} // a commit happened (buffered 1)
	stop  context.CancelFunc
	ended chan struct{}
	runs  atomic.Int64 // checkpoints run, for tests
}

// startCheckpointer starts the checkpointer of db.
func startCheckpointer(db *sql.DB) *checkpointer {
	ctx, stop := context.WithCancel(context.Background())
	c := &checkpointer{db: db, kick: make(chan struct{}, 1), stop: stop, ended: make(chan struct{})}
	go c.run(ctx)
	return c
}

// committed tells the checkpointer that a transaction committed. It never
// blocks. A nil checkpointer (PostgreSQL) ignores it.
func (c *checkpointer) committed() {
	if c == nil {
		return
	}
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *checkpointer) run(ctx context.Context) {
	defer close(c.ended)
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.kick:
		}
		// A failed checkpoint (SQLITE_BUSY while the database is
		// closing, say) is retried at the next commit; frames stay in the
		// WAL until then, which costs space, never data.
		_, _ = c.db.ExecContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)")
		c.runs.Add(1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(checkpointInterval):
		}
	}
}

// close stops the checkpointer and waits for it. The last connection to
// close checkpoints what is left (SQLite does so on close).
func (c *checkpointer) close() {
	if c == nil {
		return
	}
	c.stop()
	<-c.ended
}
