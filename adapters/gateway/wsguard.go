package gateway

import (
	"encoding/binary"
	"fmt"
	"io"
	"log/slog"
	"net"
	"sync"
	"time"
)

// The WebSocket frame guard bounds what an agent can make the gateway hold
// before a message is decoded. opamp-go v0.23.0 upgrades with a
// gorilla/websocket Upgrader that has no read limit and does not expose its
// *websocket.Conn, and reads each message whole (io.ReadAll): a message of
// 256 MiB was held whole before the gateway's MaxMessageBytes applied, and
// a frame header announcing 2^62 bytes left the connection waiting for
// them. gorilla reads the hijacked net.Conn (its Upgrade resets the
// hijacked bufio.Reader onto it), so the gateway hands it a net.Conn whose
// Read parses the frame headers (RFC 6455 §5.2) of the client's bytes as
// they arrive, before gorilla sees them:
//   - a frame that announces more than the limit, or a frame that takes its
//     message's running total over it, closes the connection with 1009
//     (message too big) at its header, before a byte of its payload is
//     passed on;
//   - a message that grows over smallMessageBytes waits for one of the
//     task's decode slots (decodeslots.go) before its bytes are passed on,
//     and holds it until its handler returns, so that at most
//     Config.DecodeSlots large messages are read, decoded and handled at
//     once; one that waits longer than Config.SlotWait is closed with 1013
//     (try again later), and one that holds a slot must arrive within
//     slotReadTimeout.
//
// Writes are not touched: the wrapper of a *net.TCPConn embeds it, so that
// gorilla's net.Buffers writes stay one writev and the pings written beside
// them (ping.go) cannot split a frame.

// smallMessageBytes: a message up to this size needs no decode slot. A
// heartbeat is tens of bytes and a full status report a few KiB; an
// effective configuration reported back is what makes a message large.
const smallMessageBytes = 16 << 10

// slotReadTimeout bounds the time a message holding a decode slot may take
// to arrive, so that a few agents sending slowly cannot keep every slot.
const slotReadTimeout = 30 * time.Second

// lingerTimeout is how long a refused connection is read (and discarded)
// after its close frame, so that the agent reads the close code rather than
// a reset: closing a socket with unread bytes sends RST at once.
const lingerTimeout = 2 * time.Second

// WebSocket close codes (RFC 6455 §7.4.1).
const (
	closeMessageTooBig = 1009
	closeTryAgainLater = 1013
)

// wsRefusal is why the guard closed a connection.
type wsRefusal struct {
	code   int
	reason string
}

func (e *wsRefusal) Error() string {
	return fmt.Sprintf("websocket closed by the gateway (%d): %s", e.code, e.reason)
}

// frameGuard parses the frames of one connection. read, scan and the
// holds run on opamp-go's read goroutine; close may come from any.
type frameGuard struct {
	limit    uint64 // bytes of one message's payload
	slots    *decodeSlots
	log      *slog.Logger
	remote   string
	released func()           // the connection's count at its source, once
	counted  func(*wsRefusal) // counts a refusal in Stats

	header    [14]byte // the frame header being read
	headerLen int
	remaining uint64 // payload bytes of the current frame still to pass
	message   uint64 // running total of the current data message
	final     bool   // the current frame ends its message
	slotted   bool   // the current message holds a slot
	refused   error

	mu        sync.Mutex
	held      []bool // messages begun and not yet handled: whether each holds a slot
	closed    chan struct{}
	closeOnce sync.Once
}

func newFrameGuard(limit int, slots *decodeSlots, log *slog.Logger, remote string, released func(), counted func(*wsRefusal)) *frameGuard {
	return &frameGuard{limit: uint64(limit), slots: slots, log: log, remote: remote, released: released, counted: counted, closed: make(chan struct{})}
}

// guardConn wraps a hijacked connection in the guard. A *net.TCPConn keeps
// its own type's write methods (writev) through embedding.
func guardConn(conn net.Conn, g *frameGuard) net.Conn {
	if tcp, ok := conn.(*net.TCPConn); ok {
		return &guardedTCP{TCPConn: tcp, g: g}
	}
	return &guardedConn{Conn: conn, g: g}
}

type guardedTCP struct {
	*net.TCPConn
	g *frameGuard
}

func (c *guardedTCP) Read(p []byte) (int, error) { return c.g.read(c.TCPConn, p) }
func (c *guardedTCP) Close() error               { c.g.close(); return c.TCPConn.Close() }

// WriteTo hides the TCPConn's, which would read past the guard.
func (c *guardedTCP) WriteTo(w io.Writer) (int64, error) {
	return io.Copy(w, struct{ io.Reader }{c})
}
func (c *guardedTCP) raw() net.Conn      { return c.TCPConn }
func (c *guardedTCP) guard() *frameGuard { return c.g }

type guardedConn struct {
	net.Conn
	g *frameGuard
}

func (c *guardedConn) Read(p []byte) (int, error) { return c.g.read(c.Conn, p) }
func (c *guardedConn) Close() error               { c.g.close(); return c.Conn.Close() }
func (c *guardedConn) raw() net.Conn              { return c.Conn }
func (c *guardedConn) guard() *frameGuard         { return c.g }

type guarded interface {
	raw() net.Conn
	guard() *frameGuard
}

// rawConn is the connection under the guard (the pings write to it).
func rawConn(conn net.Conn) net.Conn {
	if g, ok := conn.(guarded); ok {
		return g.raw()
	}
	return conn
}

// guardOf is the guard of an opamp-go connection's net.Conn, or nil.
func guardOf(conn net.Conn) *frameGuard {
	if g, ok := conn.(guarded); ok {
		return g.guard()
	}
	return nil
}

func (g *frameGuard) read(conn net.Conn, p []byte) (int, error) {
	if g.refused != nil {
		return 0, g.refused
	}
	n, err := conn.Read(p)
	if refusal := g.scan(conn, p[:n]); refusal != nil {
		g.refused = refusal
		g.counted(refusal)
		g.refuse(conn, refusal, p)
		return 0, refusal
	}
	return n, err
}

// scan follows the frames in b: headers are collected across reads,
// payloads skipped.
func (g *frameGuard) scan(conn net.Conn, b []byte) *wsRefusal {
	for len(b) > 0 {
		if g.remaining > 0 {
			skip := min(g.remaining, uint64(len(b)))
			g.remaining -= skip
			b = b[skip:]
			g.payloadPassed(conn)
			continue
		}
		g.header[g.headerLen] = b[0]
		g.headerLen++
		b = b[1:]
		if g.headerLen < headerSize(g.header[:g.headerLen]) {
			continue
		}
		if refusal := g.frame(conn); refusal != nil {
			return refusal
		}
		g.payloadPassed(conn)
	}
	return nil
}

// headerSize is the length of a client's frame header from its first two
// bytes: 2, plus 2 or 8 bytes of extended length, plus a 4-byte mask key.
func headerSize(h []byte) int {
	if len(h) < 2 {
		return 2
	}
	n := 2
	switch h[1] & 0x7f {
	case 126:
		n += 2
	case 127:
		n += 8
	}
	if h[1]&0x80 != 0 {
		n += 4
	}
	return n
}

// frame checks the header just read against the limit and takes a decode
// slot for a message that grows large.
func (g *frameGuard) frame(conn net.Conn) *wsRefusal {
	h := g.header[:g.headerLen]
	g.headerLen = 0
	length := uint64(h[1] & 0x7f)
	switch length {
	case 126:
		length = uint64(binary.BigEndian.Uint16(h[2:4]))
	case 127:
		length = binary.BigEndian.Uint64(h[2:10])
	}
	opcode := h[0] & 0x0f
	if opcode >= 8 { // a control frame: no part of a message (gorilla refuses one over 125 bytes)
		g.remaining = length
		return nil
	}
	if length > g.limit {
		return g.tooBig(length)
	}
	if opcode != 0 { // text or binary: a new message
		g.message, g.slotted = 0, false
		g.mu.Lock()
		g.held = append(g.held, false)
		g.mu.Unlock()
	}
	g.message += length
	if g.message > g.limit {
		return g.tooBig(g.message)
	}
	g.remaining, g.final = length, h[0]&0x80 != 0
	if g.message > smallMessageBytes && !g.slotted {
		return g.takeSlot(conn)
	}
	return nil
}

// payloadPassed clears the read deadline of a large message once its last
// byte has passed.
func (g *frameGuard) payloadPassed(conn net.Conn) {
	if g.remaining == 0 && g.final && g.slotted {
		g.final = false
		_ = conn.SetReadDeadline(time.Time{})
	}
}

func (g *frameGuard) tooBig(n uint64) *wsRefusal {
	g.log.Warn("closed a WebSocket connection: message too big", "remote", g.remote, "bytes", n, "limit", g.limit)
	return &wsRefusal{code: closeMessageTooBig, reason: fmt.Sprintf("message of %d bytes exceeds %d", n, g.limit)}
}

// takeSlot waits for a decode slot for the current message; the message
// must then arrive within slotReadTimeout (a network deadline, so the
// wall clock).
func (g *frameGuard) takeSlot(conn net.Conn) *wsRefusal {
	if !g.slots.acquire(g.closed) {
		g.log.Warn("closed a WebSocket connection: no decode slot for a large message", "remote", g.remote, "bytes", g.message)
		return &wsRefusal{code: closeTryAgainLater, reason: "too many large messages at once, try again later"}
	}
	g.slotted = true
	g.mu.Lock()
	g.held[len(g.held)-1] = true
	g.mu.Unlock()
	// A socket deadline is a point of the operating system's clock, so
	// it is set from the wall clock, not from Config.Now (a test's fake
	// clock would expire it at once or never).
	_ = conn.SetReadDeadline(time.Now().Add(slotReadTimeout))
	return nil
}

// handled is called once a message begun here was handled (or dropped):
// its slot, if it took one, goes back.
func (g *frameGuard) handled() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if len(g.held) == 0 {
		return
	}
	if g.held[0] {
		g.slots.release()
	}
	g.held = g.held[1:]
}

// close returns every slot still held and the connection's count at its
// source; it ends a wait for a slot.
func (g *frameGuard) close() {
	g.closeOnce.Do(func() {
		close(g.closed)
		g.mu.Lock()
		for _, h := range g.held {
			if h {
				g.slots.release()
			}
		}
		g.held = nil
		g.mu.Unlock()
		if g.released != nil {
			g.released()
		}
	})
}

// refuse writes the close frame (unmasked, as a server's; one Write, like
// a ping, so it lands between gorilla's frames) and reads what the agent
// still sends until it closes or lingerTimeout passes, discarding it into
// buf. The caller returns the refusal to gorilla, and opamp-go closes the
// connection.
func (g *frameGuard) refuse(conn net.Conn, r *wsRefusal, buf []byte) {
	reason := r.reason
	if len(reason) > 123 { // a control frame carries at most 125 bytes
		reason = reason[:123]
	}
	frame := append([]byte{0x88, byte(2 + len(reason)), byte(r.code >> 8), byte(r.code)}, reason...)
	_ = conn.SetWriteDeadline(time.Now().Add(lingerTimeout)) // the socket's clock, as above
	if _, err := conn.Write(frame); err != nil {
		return
	}
	_ = conn.SetReadDeadline(time.Now().Add(lingerTimeout))
	if len(buf) == 0 {
		buf = make([]byte, 512)
	}
	for {
		if _, err := conn.Read(buf); err != nil {
			return
		}
	}
}
