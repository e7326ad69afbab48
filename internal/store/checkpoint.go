package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"
	"sync/atomic"
	"time"
)

// checkpointInterval is the least time between two WAL checkpoints of the
// checkpointer: the frames committed meanwhile are copied back in one
// pass, so a page written by many transactions is copied once. With
// synchronous(NORMAL) a checkpoint is also when the WAL reaches the disk:
// a power loss (not a crash of the process, which loses nothing
// committed) can lose the commits of the last interval. A longer interval
// lets no more through, and each checkpoint's larger copy and fsync
// raises the latency of the commits behind it.
const checkpointInterval = 100 * time.Millisecond

// checkpointer copies committed WAL frames back into a SQLite database
// file, mostly off the writers' path. SQLite's own automatic checkpoint
// runs in the commit that crosses wal_autocheckpoint pages, with the write
// lock held and two fsyncs in it: every writer of the process would wait
// for it. Connections are opened with wal_autocheckpoint(0), so
// commits never checkpoint; this goroutine does, at most every interval
// after a commit, in two steps:
//
//   - a PASSIVE checkpoint, beside the writers, copies the bulk of the
//     frames (those no reader still needs);
//   - then, once the WAL holds restartFrames frames, with the process's
//     write lock (a turn of its own in the write queue), a RESTART
//     checkpoint copies the frames committed meanwhile and waits, briefly,
//     for the readers of older snapshots, so that the next writer starts
//     the WAL over from its beginning.
//
// Without the second step the WAL never started over while writes went on
// (a checkpoint beside the writers never catches up with them): it grew
// as fast as the writes, every commit extended the file and every read
// searched a longer WAL index. The second step holds up the writers for
// its two fsyncs, which at every checkpoint would raise the latency of
// every write: it runs only once the WAL is worth starting over
// (restartFrames).
type checkpointer struct {
	db       *sql.DB
	writes   *writeQueue
	interval time.Duration
	// restartFrames is the WAL length, in frames, from which a checkpoint
	// starts the WAL over (the constant restartFrames; tests set fewer).
	restartFrames int64
	kick          chan struct{} // a commit happened (buffered 1)
	stop          context.CancelFunc
	ended         chan struct{}
	runs          atomic.Int64 // checkpoints run, for tests
}

// restartWait bounds the second step's wait for readers of older
// snapshots, during which the writers of the process wait: a reader that
// takes longer (an export streaming rows) leaves the WAL to grow until a
// later checkpoint.
const restartWait = 100 * time.Millisecond

// restartFrames is how long the WAL grows before the checkpointer starts
// it over: 65,536 frames, 256 MiB of 4 KiB pages.
const restartFrames = 65536

// startCheckpointer starts the checkpointer of db, whose writers queue in
// writes, checkpointing at most every interval and starting the WAL over
// from restart frames.
func startCheckpointer(db *sql.DB, writes *writeQueue, interval time.Duration, restart int64) *checkpointer {
	ctx, stop := context.WithCancel(context.Background())
	c := &checkpointer{db: db, writes: writes, interval: interval, restartFrames: restart,
		kick: make(chan struct{}, 1), stop: stop, ended: make(chan struct{})}
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
		var busy, frames, copied int64
		err := c.db.QueryRowContext(ctx, "PRAGMA wal_checkpoint(PASSIVE)").Scan(&busy, &frames, &copied)
		if err == nil && frames >= c.restartFrames {
			_ = c.restart(ctx)
		}
		c.runs.Add(1)
		select {
		case <-ctx.Done():
			return
		case <-time.After(c.interval):
		}
	}
}

// restart runs the RESTART checkpoint with the process's write lock, on
// a connection whose busy handler waits restartWait at most.
func (c *checkpointer) restart(ctx context.Context) error {
	conn, err := c.db.Conn(ctx)
	if err != nil {
		return err
	}
	defer conn.Close()
	if _, err := conn.ExecContext(ctx, fmt.Sprintf("PRAGMA busy_timeout = %d", restartWait.Milliseconds())); err != nil {
		return err
	}
	defer func() {
		_, err := conn.ExecContext(context.WithoutCancel(ctx), fmt.Sprintf("PRAGMA busy_timeout = %d", busyTimeout.Milliseconds()))
		if err != nil { // a connection left with the short wait must not go back to the pool
			_ = conn.Raw(func(any) error { return driver.ErrBadConn })
		}
	}()
	if err := c.writes.enterAlone(ctx); err != nil {
		return err
	}
	defer c.writes.handOff()
	_, err = conn.ExecContext(ctx, "PRAGMA wal_checkpoint(RESTART)")
	return err
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
