package gateway

import (
	"sync"
	"time"
)

// A WebSocket connection that authenticated but opened no agent session is
// closed when it stays quiet: FirstMessageWait after the upgrade without a
// complete message (one that arrived in time is not cut off while it is
// handled), or the liveness timeout (Heartbeat × OfflineAfterHeartbeats)
// after a message that opened no session (one refused as malformed, or one
// answered "unavailable, retry" while the store was busy; the agent sends
// again at its next heartbeat). Once a session is open, the sweep's
// liveness rule closes the connection of an agent gone silent. Before
// this, 1,000 connections that sent nothing stayed open for good.

// DefaultFirstMessageWait is Config.FirstMessageWait unless set: an agent
// sends its first status report right after it connects.
const DefaultFirstMessageWait = 10 * time.Second

// Timer is what a quiet connection's bound needs of the *time.Timer that
// time.AfterFunc returns.
type Timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

func afterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// quietTimer closes its link when it fires before a session opened.
type quietTimer struct {
	mu      sync.Mutex
	timer   Timer
	stopped bool
}

// startQuietTimer arms the first-message bound of a WebSocket link.
func (l *link) startQuietTimer() {
	q := &quietTimer{}
	l.quiet = q
	q.mu.Lock() // a short bound may fire before the timer is stored
	defer q.mu.Unlock()
	q.timer = l.g.cfg.AfterFunc(l.g.cfg.FirstMessageWait, func() { l.quietFired(q) })
}

// arrived follows the read of a complete message, before it is handled:
// the first-message bound is met, and the link gets the liveness timeout
// while the message is handled. A first message can take longer to handle
// than the bound: its identity and agent reads wait for a store slot, each
// up to StoreTimeout, while a connect storm fills them. Closed meanwhile,
// the agent reconnected and sent it again, adding reads for every one that
// timed out, until at 1,000 agents connecting together no connection opened
// a session for minutes and the gateway only answered identity reads.
func (l *link) arrived() {
	q := l.quiet
	if q == nil || l.s != nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.stopped {
		q.timer.Reset(l.g.timeout)
	}
}

// heard follows a complete message: a link with a session is left to the
// sweep, one without gets the liveness timeout from now. It runs on the
// connection's goroutine (opamp-go's handleWSConnection calls every
// callback of a connection there), as do arrived and closed, the other
// readers of l.quiet.
func (l *link) heard() {
	q := l.quiet
	if q == nil {
		return
	}
	if l.s != nil {
		l.opened.Store(true)
		q.stop()
		l.quiet = nil // its timer and state (about 250 bytes) go with it
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.stopped {
		q.timer.Reset(l.g.timeout)
	}
}

func (l *link) quietFired(q *quietTimer) {
	if l.opened.Load() || q.isStopped() {
		return
	}
	l.g.quietClosed.Add(1)
	l.g.log.Debug("closed a connection that opened no agent session in time", "remote", l.conn.Connection().RemoteAddr().String())
	_ = l.conn.Disconnect() // an error means it is closed already
}

func (q *quietTimer) stop() {
	if q == nil {
		return
	}
	q.mu.Lock()
	defer q.mu.Unlock()
	q.stopped = true
	q.timer.Stop()
}

func (q *quietTimer) isStopped() bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.stopped
}
