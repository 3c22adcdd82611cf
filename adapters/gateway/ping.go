package gateway

import (
	"errors"
	"net"
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
// Only a connection that carried no message and no ping for the whole
// interval is pinged: an agent's own messages keep the flow alive just as
// well. One pass over the task's connections finds the quiet ones, a
// quarter of the interval apart (Run), so a ping goes out between one and
// one and a quarter intervals of quiet. Before, each connection had a
// timer that pinged it every interval: with opamp-go's 30 s heartbeat
// against the default minute, that added a write, a pong's read and two
// threads' wake-ups (the timer's and the pong's) per agent per minute, a
// third of the CPU an idle task spends on its heartbeats, and a timer
// and its state (about 400 bytes) per connection (docs/scale.md, the
// gateway side by side).
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
// connection. Instead the write runs on a goroutine of its own, one per
// connection at most: a peer that reads nothing blocks that goroutine
// only, gets no second ping meanwhile, and the write ends when the
// connection closes (the silence sweep, a drain, or the read loop's end).

// DefaultWSPing is Config.WSPing unless set: well under the load balancer's
// 350 s, and a few bytes a minute per quiet agent.
const DefaultWSPing = time.Minute

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

// pinger is the ping state of one WebSocket connection: when it last
// carried a message or a ping, and whether a ping is being written.
type pinger struct {
	conn    net.Conn
	quiet   atomic.Int64 // since when (Unix nanoseconds): the last message, ping or the connect
	writing atomic.Bool  // a ping is being written
	ended   atomic.Bool  // the connection closed or a ping failed: no more pings
}

func newPinger(conn net.Conn, now time.Time) *pinger {
	p := &pinger{conn: conn}
	p.quiet.Store(now.UnixNano())
	return p
}

// heardAt notes that a message arrived at t: the next ping waits a whole
// interval from then.
func (p *pinger) heardAt(t time.Time) {
	if p != nil {
		p.quiet.Store(t.UnixNano())
	}
}

// take reports whether the connection has been quiet for every as of now
// and no ping is being written, and if so marks one as being written.
func (p *pinger) take(now time.Time, every time.Duration) bool {
	if p.ended.Load() || now.UnixNano()-p.quiet.Load() < int64(every) {
		return false
	}
	return p.writing.CompareAndSwap(false, true)
}

// write writes the ping that take marked, then counts the quiet from now;
// failed is true when the write failed on a connection still open, which
// is then pinged no more.
func (p *pinger) write(now func() time.Time) (failed bool, err error) {
	_, err = p.conn.Write(pingFrame)
	p.quiet.Store(now().UnixNano())
	if err != nil {
		failed = p.ended.CompareAndSwap(false, true)
	}
	p.writing.Store(false)
	return failed, err
}

// stop ends the pings when the connection closes. It does not wait for a
// ping being written: that write ends when opamp-go closes the connection,
// just after OnConnectionClose returns.
func (p *pinger) stop() {
	if p != nil {
		p.ended.Store(true)
	}
}

// pingerOf is the ping state of a new WebSocket link, or nil when pings
// are off or its connection is not one a ping can be written beside
// (writesWholeFrames).
func (g *Gateway) pingerOf(l *link) *pinger {
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
	return newPinger(conn, g.now())
}

// PingEvery is how often Run looks for quiet connections to ping: a
// quarter of WSPing (every 15 s with the default minute).
func (g *Gateway) PingEvery() time.Duration { return max(g.cfg.WSPing/4, time.Millisecond) }

// pingQuiet pings every WebSocket connection of the task that carried no
// message and no ping for WSPing, each on a goroutine of its own. It reads
// each connection's quiet atomically under the link set's lock, without
// copying the set, and starts the writes after the lock is released.
func (g *Gateway) pingQuiet() {
	if g.cfg.WSPing < 0 {
		return
	}
	for _, l := range g.links.quiet(g.now(), g.cfg.WSPing) {
		g.pingsInFlight.Add(1)
		go l.writePing()
	}
}

func (l *link) writePing() {
	defer l.g.pingsInFlight.Add(-1)
	failed, err := l.ping.write(l.g.now)
	if err == nil {
		l.g.pingsSent.Add(1)
	}
	if !failed {
		return
	}
	// The transport broke, or a deadline gorilla left from a control frame
	// of its own (1 s) expired, and part of the frame may be on the wire:
	// the connection is closed and the agent reconnects. One closed already
	// is left to the read loop.
	if errors.Is(err, net.ErrClosed) {
		return
	}
	l.g.log.Debug("WebSocket ping failed: closing the connection", "error", err)
	_ = l.conn.Disconnect() // an error means it is closed already
}
