package app

import (
	"net"
	"net/http"
	"sync"
	"time"
)

// quietGrace is how long a connection may stay open without a request
// before shutdown closes it.
const quietGrace = 500 * time.Millisecond

// quietConns tracks the connections that have not sent a request yet
// (browsers open spare ones ahead of need) and closes them when the
// server shuts down: http.Server.Shutdown counts such a connection idle
// only after 5 seconds, and so waited that long to stop whenever a
// browser had been served. A connection is closed once it has been open
// quietGrace without a request, so one whose first request is on its
// way is served.
type quietConns struct {
	mu    sync.Mutex
	since map[net.Conn]time.Time
}

func newQuietConns() *quietConns { return &quietConns{since: map[net.Conn]time.Time{}} }

// track is the http.Server's ConnState hook.
func (q *quietConns) track(c net.Conn, state http.ConnState) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if state == http.StateNew {
		q.since[c] = time.Now()
	} else {
		delete(q.since, c)
	}
}

// closeAll closes the quiet connections until none is left: the
// http.Server's RegisterOnShutdown hook, which runs once its listeners
// are closed, so no new connection joins.
func (q *quietConns) closeAll() {
	for {
		wait := q.closeOld(time.Now())
		if wait == 0 {
			return
		}
		time.Sleep(wait)
	}
}

// closeOld closes the connections quiet for quietGrace by now and
// returns how long until the next one is due (0: none left).
func (q *quietConns) closeOld(now time.Time) time.Duration {
	q.mu.Lock()
	defer q.mu.Unlock()
	var next time.Duration
	for c, since := range q.since {
		if due := since.Add(quietGrace).Sub(now); due > 0 {
			if next == 0 || due < next {
				next = due
			}
			continue
		}
		_ = c.Close()
		delete(q.since, c)
	}
	return next
}
