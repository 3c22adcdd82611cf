package gateway

import (
	"bufio"
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"

	"github.com/open-telemetry/opamp-go/server"
	"github.com/open-telemetry/opamp-go/server/types"
)

// Attach returns the OpAMP handler (WebSocket and plain HTTP on one path)
// and the ConnContext that the http.Server serving it must use: opamp-go
// finds the connection of a plain HTTP request through it.
func (g *Gateway) Attach() (http.Handler, func(context.Context, net.Conn) context.Context, error) {
	srv := server.New(opampLogger{g.log})
	handle, connContext, err := srv.Attach(server.Settings{Callbacks: types.Callbacks{OnConnecting: g.connecting}})
	if err != nil {
		return nil, nil, fmt.Errorf("attach OpAMP server: %w", err)
	}
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if isWebSocket(r) {
			g.serveWebSocket(handle, w, r)
			return
		}
		w, body := g.boundPlainBody(w, r)
		defer body.release()
		handle(w, r)
		if body.status == http.StatusRequestEntityTooLarge {
			g.tooBig.Add(1)
		} else if body.status == http.StatusServiceUnavailable {
			g.noDecodeSlot.Add(1)
		}
	})
	return h, connContext, nil
}

// serveWebSocket counts the connection at its source (refused with 429
// over MaxConnsPerSource) and hands opamp-go a response writer whose
// Hijack puts the frame guard (wsguard.go) under gorilla/websocket. The
// count ends when the connection closes, or here when it was not upgraded
// (refused, or a bad handshake).
func (g *Gateway) serveWebSocket(handle server.HTTPHandlerFunc, w http.ResponseWriter, r *http.Request) {
	src := sourceOf(r.RemoteAddr)
	ok, show := g.sources.acquire(src)
	if !ok {
		g.refusedPerSource.Add(1)
		if show > 0 {
			g.log.Warn("refused WebSocket connections over the per-source limit", "source", src, "refused", show, "limit", g.cfg.MaxConnsPerSource)
		}
		w.Header().Set("Retry-After", "30")
		http.Error(w, "too many connections from this address", http.StatusTooManyRequests)
		return
	}
	hw := &guardedHijack{ResponseWriter: w, g: g, remote: r.RemoteAddr, release: sync.OnceFunc(func() { g.sources.release(src) })}
	handle(hw, r)
	if !hw.hijacked {
		hw.release()
	}
}

// A WebSocket keeps the buffers of the HTTP connection it was upgraded from
// for its life (gorilla/websocket reuses the hijacked bufio.Reader and
// bufio.Writer, 4 KiB each, and opamp-go v0.23.0 offers no Upgrader
// settings). An idle agent sends a few dozen bytes per heartbeat and is sent
// as few, so smaller buffers save ~6 KiB per connection; a larger message
// takes more reads, or is written as several frames of one message.
const (
	wsReadBufferBytes  = 1024 // gorilla reuses a hijacked reader above 256 bytes
	wsWriteBufferBytes = 1024 // and a writer from 270 bytes (frame header + 256)
)

// guardedHijack hands gorilla/websocket the hijacked connection under the
// frame guard, and smaller buffers than net/http's when no byte is
// buffered yet (gorilla refuses a client that sent data before the
// handshake completed anyway).
type guardedHijack struct {
	http.ResponseWriter
	g        *Gateway
	remote   string
	release  func() // the connection's count at its source
	hijacked bool
}

func (w *guardedHijack) Hijack() (net.Conn, *bufio.ReadWriter, error) {
	h, ok := w.ResponseWriter.(http.Hijacker)
	if !ok {
		return nil, nil, errors.New("gateway: the response writer cannot be hijacked")
	}
	conn, brw, err := h.Hijack()
	if err != nil {
		return conn, brw, err
	}
	w.hijacked = true
	g := w.g
	guard := newFrameGuard(g.cfg.MaxMessageBytes+wsHeaderBytes, g.decodeSlots, g.log, w.remote, w.release, g.countRefusal)
	conn = guardConn(conn, guard)
	if brw.Reader.Buffered() > 0 || brw.Writer.Buffered() > 0 {
		return conn, brw, nil
	}
	return conn, bufio.NewReadWriter(bufio.NewReaderSize(conn, wsReadBufferBytes), bufio.NewWriterSize(conn, wsWriteBufferBytes)), nil
}

func (w *guardedHijack) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// wsHeaderBytes is what OpAMP puts before the protobuf in a WebSocket
// message: a varint header (0 today), at most 10 bytes.
const wsHeaderBytes = binary.MaxVarintLen64

func (g *Gateway) countRefusal(r *wsRefusal) {
	switch r.code {
	case closeMessageTooBig:
		g.tooBig.Add(1)
	case closeTryAgainLater:
		g.noDecodeSlot.Add(1)
	}
}

// isWebSocket is whether r asks for a WebSocket upgrade (RFC 6455 §4.1).
func isWebSocket(r *http.Request) bool {
	return strings.EqualFold(r.Header.Get("Upgrade"), "websocket")
}

// Drain ends this task's WebSocket connections for a shutdown: new
// connections are refused with 503, open ones are closed (their agents
// reconnect through the load balancer to another task) and Drain waits for
// their close callbacks and the writes still queued until ctx ends, then
// ends the task's lease. Stop the http.Server first so that
// no connection arrives meanwhile.
func (g *Gateway) Drain(ctx context.Context) error {
	g.draining.Store(true)
	g.flushed.Do(func() { close(g.flush) })
	defer g.endLease()
	defer g.waitWrites(ctx)
	for {
		open := g.links.snapshot()
		if len(open) == 0 {
			return nil
		}
		// Again on every round: a connection accepted just before the drain
		// began may register after the first round.
		for _, l := range open {
			_ = l.conn.Disconnect() // an error means it is closed already
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("%w: %d left", errDrainTimeout, len(g.links.snapshot()))
		case <-g.links.closed:
		}
	}
}

// Draining reports whether Drain was called; the health endpoint turns
// unhealthy then so that the load balancer stops sending agents here.
func (g *Gateway) Draining() bool { return g.draining.Load() }

// tokenSet holds the digests of the accepted bearer tokens. Comparing
// fixed-size digests in constant time reveals neither a token nor its length.
type tokenSet struct{ digests [][sha256.Size]byte }

// SetTokens replaces the accepted tokens (rotation: old and new are valid
// together until the old one is removed). Empty tokens are ignored.
func (g *Gateway) SetTokens(tokens []string) error {
	ts := &tokenSet{}
	for _, t := range tokens {
		if t = strings.TrimSpace(t); t != "" {
			ts.digests = append(ts.digests, sha256.Sum256([]byte(t)))
		}
	}
	if len(ts.digests) == 0 {
		return errors.New("gateway: at least one agent token is required")
	}
	g.tokens.Store(ts)
	return nil
}

func (ts *tokenSet) valid(token string) bool {
	if token == "" {
		return false
	}
	d := sha256.Sum256([]byte(token))
	ok := 0
	for _, want := range ts.digests {
		ok |= subtle.ConstantTimeCompare(d[:], want[:])
	}
	return ok == 1
}

// bearer is the token of an "Authorization: Bearer <token>" header.
func bearer(r *http.Request) string {
	scheme, token, found := strings.Cut(r.Header.Get("Authorization"), " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return ""
	}
	return strings.TrimSpace(token)
}

// opampLogger routes opamp-go's own log lines into slog, one level down:
// the gateway logs the decisions (a lost connection, a dropped message)
// itself, and opamp-go's view of the same events would only repeat them.
type opampLogger struct{ log *slog.Logger }

// Lines of a disabled level are not formatted.
func (l opampLogger) Debugf(ctx context.Context, format string, v ...any) {
	if l.log.Enabled(ctx, slog.LevelDebug) {
		l.log.DebugContext(ctx, fmt.Sprintf(format, v...), "source", "opamp-go")
	}
}

func (l opampLogger) Errorf(ctx context.Context, format string, v ...any) {
	if l.log.Enabled(ctx, slog.LevelInfo) {
		l.log.InfoContext(ctx, fmt.Sprintf(format, v...), "source", "opamp-go")
	}
}
