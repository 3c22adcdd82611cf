package gateway

import (
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// The gateway pings every WebSocket agent so that its connection never
// looks idle to the load balancer: AWS's Network Load Balancer drops a TLS
// flow on which nothing passed for 350 s, and a connection that carries
// nothing for that long (an agent with a longer heartbeat, where the
// liveness timeout Heartbeat × OfflineAfterHeartbeats allows it, or a connection
// before its first message) would be lost without either end noticing
// until its next write. A ping (and the agent's pong) keeps the flow alive;
// it is not an OpAMP message and does not count as a heartbeat: a silent
// agent is still closed by the sweep.
//
// Only a connection that carried no message for the whole interval is
// pinged: an agent's own messages keep the flow alive just as well, and
// with a heartbeat shorter than the interval (opamp-go's 30 s against the
// default minute) a ping on every connection would add a write, a pong's
// read and a thread's wake-up to each agent every minute, a third more than
// its heartbeats cost (docs/scale.md, the gateway side by side). The timer
// still fires once per interval; it then waits out what remains of the
// interval since the last message.
//
// opamp-go v0.23.0 neither sends pings nor exposes its gorilla/websocket
// Conn, whose WriteControl would (open-telemetry/opamp-go#397), so the
// gateway writes the frame itself, with one Write on the net.Conn under the
// WebSocket (types.Connection.Connection()). This goes away when opamp-go
// exposes pings: then the gateway sets their interval instead.
//
// Why a frame written beside gorilla/websocket lands whole between its
// frames (gorilla/websocket v1.5.3, opamp-go v0.23.0, Go's net):
//   - gorilla writes each frame, data or control, with one call under its
//     write mutex (conn.go 379–403: one c.conn.Write, or net.Buffers for a
//     large payload; WriteControl at 463 likewise); opamp-go's Send builds
//     a message with NextWriter, a large one as a long frame written as two
//     buffers and an empty final frame.
//   - On a *net.TCPConn one Write, and one net.Buffers write (writev,
//     net/writev_unix.go), runs whole under the socket's write lock:
//     internal/poll FD.Write and FD.Writev hold fd.writeLock until every
//     byte is written or the write fails. So the ping's two bytes go before
//     or after a frame of gorilla's, never inside it.
//   - RFC 6455 §5.4 lets control frames come between the fragments of a
//     message, and §5.5.2 lets either end ping at any time; gorilla's own
//     WriteControl relies on the same, and its reader answers pings met
//     inside a message.
//
// The reasoning fails on other connections: a *tls.Conn (the gateway's own
// -tls-cert; in the cloud the load balancer terminates TLS) has no writev,
// and net.Buffers.WriteTo writes the header and the payload of gorilla's
// large frame with two Write calls (net/net.go, Buffers.WriteTo), between
// which a ping could land (pinging as TestRawPingsBesideGorillaWrites does,
// over TLS, corrupted a message in two runs of five). Such connections are
// not pinged (writesWholeFrames).
//
// The ping is written without a write deadline: the deadline of the
// net.Conn is gorilla's too (it sets its own, zero, before each frame), so
// a deadline set for the ping could fall on a frame of a configuration
// being written, and a write that times out is fatal to gorilla's
// connection. Instead the write runs on the pinger's timer goroutine: a
// peer that reads nothing blocks that goroutine only, and the write ends
// when the connection closes (the silence sweep, a drain, or the read
// loop's end).

// DefaultWSPing is Config.WSPing unless set: well under the load balancer's
// 350 s, and a few bytes a minute per agent.
const DefaultWSPing = time.Minute

// Timer is what a pinger needs of the *time.Timer that time.AfterFunc
// returns.
type Timer interface {
	Reset(d time.Duration) bool
	Stop() bool
}

func afterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// pingFrame is a WebSocket ping (RFC 6455 §5.5.2): FIN and opcode 0x9, no
// payload, unmasked as every frame a server sends (§5.1).
var pingFrame = []byte{0x89, 0x00}

// writesWholeFrames is whether conn writes each Write and each net.Buffers
// write whole under one lock, so that a ping written beside gorilla cannot
// split a frame of its (see above): a TCP connection, not a TLS one.
func writesWholeFrames(conn net.Conn) bool {
	_, ok := conn.(*net.TCPConn)
	return ok
}

// pinger writes a ping frame to one WebSocket connection each time a whole
// interval passed without a message or a ping. It
// holds no goroutine while it waits: a timer (time.AfterFunc) runs each
// ping on a goroutine of its own and is armed again once the write
// returned, so that a connection has at most one ping in flight and an idle
// one costs a timer, not a goroutine's stack (docs/scale.md counts the
// memory of 10,000 idle agents).
type pinger struct {
	conn   net.Conn
	every  time.Duration
	now    func() time.Time
	heard  atomic.Int64 // when the last message arrived (or the connection opened), Unix nanoseconds
	failed func(error)  // a ping could not be written: the connection is to close
	live   *atomic.Int32

	mu      sync.Mutex
	timer   Timer
	stopped bool
}

// startPinger pings conn every interval until stop or a failed write; live
// counts the pingers that have not ended (no timer armed, no ping being
// written).
func startPinger(conn net.Conn, every time.Duration, now func() time.Time, after func(time.Duration, func()) Timer, failed func(error), live *atomic.Int32) *pinger {
	p := &pinger{conn: conn, every: every, now: now, failed: failed, live: live}
	p.heard.Store(now().UnixNano())
	live.Add(1)
	p.mu.Lock() // a short interval may fire before the timer is stored
	defer p.mu.Unlock()
	p.timer = after(every, p.ping)
	return p
}

// heardAt notes that a message arrived at t: the next ping waits a whole
// interval from then.
func (p *pinger) heardAt(t time.Time) {
	if p != nil {
		p.heard.Store(t.UnixNano())
	}
}

func (p *pinger) ping() {
	if quiet := time.Duration(p.now().UnixNano() - p.heard.Load()); quiet < p.every {
		p.next(nil, p.every-quiet) // a message passed meanwhile
		return
	}
	_, err := p.conn.Write(pingFrame)
	if p.next(err, p.every) {
		p.failed(err)
	}
}

// next arms the timer again, for wait, after a ping that was written (or
// not needed) and ends the pinger otherwise; failed is true when the write
// failed on a pinger that was not stopped.
func (p *pinger) next(err error, wait time.Duration) (failed bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		p.live.Add(-1)
		return false
	}
	if err != nil {
		p.stopped = true
		p.live.Add(-1)
		return true
	}
	p.timer.Reset(wait)
	return false
}

// stop ends the pinger when its connection closes. It does not wait for a
// ping being written: that write ends when opamp-go closes the connection,
// just after OnConnectionClose returns, and the ping then ends the pinger.
func (p *pinger) stop() {
	if p == nil {
		return
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.stopped {
		return
	}
	p.stopped = true
	if p.timer.Stop() { // no ping runs: none will
		p.live.Add(-1)
	}
}

// startPinger starts the pings of a WebSocket link, unless they are off or
// its connection is not one a ping can be written beside
// (writesWholeFrames).
func (g *Gateway) startPinger(l *link) *pinger {
	if g.cfg.WSPing < 0 {
		return nil
	}
	conn := rawConn(l.conn.Connection()) // under the frame guard (wsguard.go)
	if !writesWholeFrames(conn) {
		g.noPings.Do(func() {
			g.log.Info("WebSocket pings are off on connections that are not plain TCP (TLS served by the gateway itself)")
		})
		return nil
	}
	return startPinger(conn, g.cfg.WSPing, g.cfg.Now, g.cfg.AfterFunc, l.pingFailed, &g.pingers)
}

// pingFailed closes a connection whose ping could not be written: the
// transport broke, or a deadline gorilla left from a control frame of its
// own (1 s) expired, and part of the frame may be on the wire. The agent
// reconnects. A connection already closed is left to the read loop.
func (l *link) pingFailed(err error) {
	if errors.Is(err, net.ErrClosed) {
		return
	}
	l.g.log.Debug("WebSocket ping failed: closing the connection", "error", err)
	_ = l.conn.Disconnect() // an error means it is closed already
}
