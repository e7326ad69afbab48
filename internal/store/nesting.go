package store

import (
	"bytes"
	"fmt"
	"runtime"
	"strconv"
	"sync"
	"sync/atomic"
)

// nestingCheck finds statements run on the DB, not on the Tx, from
// inside a transaction's function, and transactions begun there. A write
// so run is not part of the transaction (it does not roll back with it),
// and on SQLite it waits for its turn behind the very transaction whose
// function waits for it, until writeWaitTimeout fails it. A read, or a
// transaction, so run needs a second connection of PostgreSQL's pool
// while its transaction holds one: when the pool's every connection is
// held by such a transaction (as many concurrent requests as the pool
// has connections, each waiting on a row lock or on the pool), none
// comes back and the server hangs. Tests turn it on (CheckNesting); it
// costs a stack read per transaction, and per statement run while some
// transaction's function runs.
type nestingCheck struct {
	running    atomic.Int64 // transactions' functions running now
	mu         sync.Mutex
	inTx       map[uint64]int // goroutine id: transactions it is running fn in
	violations []string
}

// CheckNesting makes the DB record every statement run on it (not on the
// Tx), and every transaction begun, by a goroutine while it runs a
// transaction's function; Violations returns them. For tests; transactions already running when it is
// called are not checked.
func (db *DB) CheckNesting() { db.nesting.CompareAndSwap(nil, &nestingCheck{inTx: map[uint64]int{}}) }

// Violations returns what CheckNesting recorded: the statement and the
// stack that ran it, once per distinct stack.
func (db *DB) Violations() []string {
	c := db.nesting.Load()
	if c == nil {
		return nil
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return append([]string(nil), c.violations...)
}

// wrap returns fn marking its goroutine as inside a transaction while it
// runs.
func (c *nestingCheck) wrap(fn func(tx *Tx) error) func(tx *Tx) error {
	return func(tx *Tx) error {
		id := goroutineID()
		c.running.Add(1)
		c.mu.Lock()
		c.inTx[id]++
		c.mu.Unlock()
		defer func() {
			defer c.running.Add(-1)
			c.mu.Lock()
			if c.inTx[id]--; c.inTx[id] == 0 {
				delete(c.inTx, id)
			}
			c.mu.Unlock()
		}()
		return fn(tx)
	}
}

// checkBegin records a transaction begun by a goroutine inside a
// transaction's function (before it waits for a connection or a turn).
func (c *nestingCheck) checkBegin() {
	if c.running.Load() == 0 {
		return
	}
	id := goroutineID()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inTx[id] > 0 {
		c.record("a transaction begun inside a transaction's function")
	}
}

// check records query if the calling goroutine is inside a
// transaction's function.
func (c *nestingCheck) check(query string) {
	if c.running.Load() == 0 {
		return
	}
	id := goroutineID()
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inTx[id] == 0 {
		return
	}
	what := "a read"
	if plainWrite(query) {
		what = "a write"
	}
	c.record(what + " on the DB inside a transaction's function: " + query)
}

// record adds what, with the calling goroutine's stack, to the
// violations unless that stack was recorded already. c.mu is held.
func (c *nestingCheck) record(what string) {
	stack := make([]byte, 8<<10)
	stack = stack[:runtime.Stack(stack, false)]
	v := fmt.Sprintf("%s\n%s", what, stack)
	for _, seen := range c.violations {
		if seen == v {
			return
		}
	}
	c.violations = append(c.violations, v)
}

// goroutineID is the calling goroutine's id, read from its stack header
// ("goroutine 123 [running]:").
func goroutineID() uint64 {
	var buf [64]byte
	b := buf[:runtime.Stack(buf[:], false)]
	b = bytes.TrimPrefix(b, []byte("goroutine "))
	b = b[:bytes.IndexByte(b, ' ')]
	id, _ := strconv.ParseUint(string(b), 10, 64)
	return id
}
