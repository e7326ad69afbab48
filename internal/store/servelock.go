package store

import (
	"errors"
	"fmt"
	"os"
	"time"
)

// ErrServed is returned by ClaimServer when another process serves the
// SQLite database.
var ErrServed = errors.New("another forgeapi server serves this SQLite database")

// ClaimServer claims the database for the one server process that may
// run on it, and reports whether this process is then its only server.
//
// On SQLite it takes an exclusive lock on a file beside the database
// (DATABASE-serve.lock), held until Close or the process's end, a kill
// -9 included (the kernel drops it): a second server on the same file
// gets ErrServed, which names the lock file. Such a pair is not a
// deployment (the write queue that orders this process's writes knows
// nothing of the other's), and it would let each release the other's
// work leases. Commands that open the database beside a running server
// (admin commands) do not claim it. exclusive is then true: work leased
// by an earlier process (a lease_owner in a work table) is left over
// from a stop or a crash, and may be released at once.
//
// On PostgreSQL, which several servers share, it claims nothing and
// reports false; so does SQLite where file locks are not available.
func (db *DB) ClaimServer() (exclusive bool, err error) {
	if db.Dialect != SQLite || db.path == "" {
		return false, nil
	}
	if db.serveLock != nil {
		return true, nil
	}
	name := db.path + "-serve.lock"
	f, err := os.OpenFile(name, os.O_RDWR|os.O_CREATE, 0o644)
	if err != nil {
		return false, fmt.Errorf("open the server lock: %w", err)
	}
	locked, supported, err := lockSoon(f)
	if err != nil || !supported {
		f.Close()
		return false, err
	}
	if !locked {
		f.Close()
		return false, fmt.Errorf("%w (%s is locked): stop it first; several servers share a PostgreSQL database, not a SQLite one", ErrServed, name)
	}
	db.serveLock = f
	return true, nil
}

// claimWait is how long ClaimServer tries the lock before it reports
// ErrServed. A server that stopped has released the lock, but a process
// forked in the same program before it did (any exec of git, which
// forks first) holds a copy of the lock's descriptor until it has
// exec'd: under load, long enough for a server started right after the
// stop to find the lock held (seen in the tests' restarts).
const claimWait = 2 * time.Second

// lockSoon is lockExclusive retried for claimWait while the lock is held.
func lockSoon(f *os.File) (locked, supported bool, err error) {
	deadline := time.Now().Add(claimWait)
	for {
		locked, supported, err = lockExclusive(f)
		if locked || !supported || err != nil || time.Now().After(deadline) {
			return locked, supported, err
		}
		time.Sleep(20 * time.Millisecond)
	}
}
