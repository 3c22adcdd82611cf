package gateway

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"
	"github.com/open-telemetry/opamp-go/server/types"
	"google.golang.org/protobuf/proto"
)

// link is one opamp-go connection: a WebSocket for its lifetime, or one
// plain HTTP request.
type link struct {
	g          *Gateway
	plainHTTP  bool
	conn       types.Connection
	ping       *pinger     // nil for plain HTTP, or when pings are off
	guard      *frameGuard // nil for plain HTTP (wsguard.go)
	quiet      *quietTimer // closes it while it opens no session (quiet.go); nil for plain HTTP
	opened     atomic.Bool // a session opened on it
	s          *session
	said       bool                                // the agent said goodbye (AgentDisconnect)
	readFailed bool                                // the transport broke rather than closed
	who        presented                           // what the connection authenticated with (identity.go)
	offer      *protobufs.ConnectionSettingsOffers // a credential to send with the next response
}

func (l *link) callbacks() types.ConnectionCallbacks {
	return types.ConnectionCallbacks{
		OnConnected:            l.connected,
		OnMessage:              l.message,
		OnConnectionClose:      l.closed,
		OnReadMessageError:     l.readError,
		OnMessageResponseError: l.responseError,
	}
}

func (l *link) connected(_ context.Context, conn types.Connection) {
	defer l.g.recoverIn("OnConnected")
	l.conn = conn
	if !l.plainHTTP {
		l.guard = guardOf(conn.Connection())
		l.ping = l.g.pingerOf(l) // before the link is in the set that pingQuiet reads
		l.g.links.add(l)
		l.startQuietTimer()
	}
}

// message handles one AgentToServer on another goroutine and waits for it.
// opamp-go calls it on the connection's goroutine, which lives as long as
// the agent stays connected and keeps most of the largest stack it grew (the
// GC halves an idle stack at most once per cycle); handling a message, and
// the store calls (AWS SDK) above all, grow a stack to tens of KiB. On a
// handler goroutine (handlers) that growth stays off the 10,000 idle
// connections. An idle heartbeat (answerIdle), most messages of a fleet,
// needs neither: it is answered here.
func (l *link) message(ctx context.Context, _ types.Connection, msg *protobufs.AgentToServer) *protobufs.ServerToAgent {
	l.arrived()
	l.ping.heardAt(l.g.now())
	defer l.heard()
	defer l.handled()
	if s := l.s; s != nil && bytes.Equal(s.uid, msg.GetInstanceUid()) && proto.Size(msg) <= l.g.cfg.MaxMessageBytes {
		if resp, ok := l.g.answerIdle(s, msg); ok {
			return resp
		}
	}
	return l.g.handlers.run(ctx, l, msg)
}

// handlers are long-lived goroutines that run message handlers, so that a
// heartbeat neither starts a goroutine nor grows a fresh stack; when all are
// busy (a connect storm, writes waiting for DynamoDB), a message gets a
// goroutine of its own instead of waiting for one. Jobs are pooled: a
// heartbeat allocates neither a closure nor a channel to hand itself over.
type handlers struct {
	jobs chan *handlerJob
	pool *sync.Pool
}

type handlerJob struct {
	ctx  context.Context
	l    *link
	msg  *protobufs.AgentToServer
	resp *protobufs.ServerToAgent
	done chan struct{} // buffered: one value when resp is set
}

func (j *handlerJob) do() {
	j.resp = j.l.handle(j.ctx, j.msg)
	j.done <- struct{}{}
}

// handlerCount is how many handlers wait for messages: a few per core is
// enough for heartbeats, which do not block.
const handlerCount = 16

func newHandlers() handlers {
	h := handlers{jobs: make(chan *handlerJob), pool: &sync.Pool{New: func() any {
		return &handlerJob{done: make(chan struct{}, 1)}
	}}}
	for range handlerCount {
		go func() {
			for j := range h.jobs {
				j.do()
			}
		}()
	}
	return h
}

func (h handlers) run(ctx context.Context, l *link, msg *protobufs.AgentToServer) *protobufs.ServerToAgent {
	j := h.pool.Get().(*handlerJob)
	j.ctx, j.l, j.msg = ctx, l, msg
	select {
	case h.jobs <- j:
	default:
		go j.do()
	}
	<-j.done
	resp := j.resp
	*j = handlerJob{done: j.done}
	h.pool.Put(j)
	return resp
}

// handle handles one AgentToServer. Whatever it cannot use is dropped with
// a log line; nothing in it may crash the task.
func (l *link) handle(ctx context.Context, msg *protobufs.AgentToServer) (resp *protobufs.ServerToAgent) {
	defer l.g.recoverIn("OnMessage")
	g := l.g
	if n := proto.Size(msg); n > g.cfg.MaxMessageBytes {
		g.log.Warn("dropped an oversized OpAMP message", "bytes", n, "limit", g.cfg.MaxMessageBytes)
		return errorResponse(msg, fmt.Errorf("message of %d bytes exceeds %d", n, g.cfg.MaxMessageBytes))
	}
	s, fresh, err := l.session(ctx, msg)
	if errors.Is(err, errRefused) {
		return l.refuse(msg, err)
	}
	if errors.Is(err, ErrMalformed) {
		g.log.Warn("dropped a malformed OpAMP message", "error", err)
		return errorResponse(msg, err)
	}
	if err != nil {
		level := slog.LevelWarn
		if errors.Is(err, errBusy) {
			level = slog.LevelDebug // backpressure: the agent tries again
		}
		g.log.Log(ctx, level, "read agent", "error", err)
		return unavailable(msg, g.cfg.Heartbeat)
	}
	resp, wrote, push, err := g.report(s, msg, fresh)
	if err != nil {
		g.log.Warn("dropped a malformed OpAMP message", "agent", s.id, "error", err)
		return errorResponse(msg, err)
	}
	if wrote {
		g.await(s) // backpressure: the write goes on if this times out
	}
	if msg.GetAgentDisconnect() != nil {
		l.said = true
		if l.plainHTTP {
			g.sessions.remove(s)
		}
	}
	if l.offer != nil {
		resp.ConnectionSettings, l.offer = l.offer, nil
	}
	g.fill(ctx, s, resp, push[0], push[1])
	g.ack(ctx, s, resp, push[1]) // opamp-go sends resp after we return: a lost one is sent again on reconnect
	return resp
}

// session finds or opens the session of the message's agent; fresh is true
// for a session opened by this message. The connection's own session is
// recognized by its instance uid's bytes, so that a heartbeat builds no id;
// an error wraps ErrMalformed for a uid that is no agent id or not this
// connection's, errRefused for a connection that cannot prove it is the
// agent (admit, before the session is touched: an impostor changes nothing).
func (l *link) session(ctx context.Context, msg *protobufs.AgentToServer) (s *session, fresh bool, err error) {
	uid := msg.GetInstanceUid()
	if l.s != nil && bytes.Equal(l.s.uid, uid) {
		return l.s, false, nil
	}
	id, err := InstanceID(uid)
	if err != nil {
		return nil, false, err
	}
	if l.s != nil {
		return nil, false, fmt.Errorf("%w: instance uid %s on the connection of %s", ErrMalformed, id, l.s.id)
	}
	if l.offer, err = l.g.admit(ctx, l.who, id, msg.GetCapabilities()); err != nil {
		return nil, false, fmt.Errorf("agent %s: %w", id, err)
	}
	if l.plainHTTP {
		if s := l.g.sessions.get(id); s != nil && s.conn == nil {
			l.s = s
			return s, false, nil
		}
		l.s, err = l.g.open(ctx, id, uid, nil)
		if err != nil {
			return nil, false, fmt.Errorf("agent %s: %w", id, err)
		}
		return l.s, true, nil
	}
	l.s, err = l.g.open(ctx, id, uid, l.conn)
	if err != nil {
		return nil, false, fmt.Errorf("agent %s: %w", id, err)
	}
	return l.s, true, nil
}

// closed ends a WebSocket session. The agent is marked offline unless the
// gateway itself closed the connection to drain: the agent reconnects to
// another task at once, and marking it offline would fail the targets in
// their health wait on every deploy; if it does not come back, it counts as
// disconnected when the drain ends the task's lease. A plain HTTP request
// closing ends nothing.
func (l *link) closed(types.Connection) {
	defer l.g.recoverIn("OnConnectionClose")
	g := l.g
	if l.plainHTTP {
		return
	}
	l.ping.stop()
	l.quiet.stop()
	defer g.links.remove(l)
	if l.s == nil {
		g.log.Debug("connection closed before the first message")
		return
	}
	g.sessions.remove(l.s)
	switch {
	case g.draining.Load():
		g.log.Debug("connection closed to drain the task", "agent", l.s.id)
		return
	case l.said || !l.readFailed:
		g.log.Debug("agent disconnected", "agent", l.s.id)
	default:
		g.log.Error("agent connection lost", "agent", l.s.id)
	}
	g.markOffline(l.s, "connection closed")
}

// handled gives back the decode slot of the message just handled or
// dropped (wsguard.go).
func (l *link) handled() {
	if l.guard != nil {
		l.guard.handled()
	}
}

// readError tells a broken transport (no bytes read) from a message that
// could not be decoded, which opamp-go drops and we log.
func (l *link) readError(_ types.Connection, _ int, msgBytes []byte, err error) {
	defer l.g.recoverIn("OnReadMessageError")
	if msgBytes == nil {
		var refusal *wsRefusal
		l.readFailed = !errors.As(err, &refusal) // the guard closed it, and logged why
		return
	}
	defer l.heard()
	l.handled()
	l.g.log.Warn("dropped an undecodable OpAMP message", "bytes", len(msgBytes), "error", err)
}

func (l *link) responseError(_ types.Connection, _ *protobufs.ServerToAgent, err error) {
	defer l.g.recoverIn("OnMessageResponseError")
	l.readFailed = true // opamp-go closes the connection next; the agent reconnects and is sent all again
	l.g.log.Debug("send response", "error", err)
}

// connecting authenticates before anything is read or written: a request
// without a valid bearer token is refused with 401.
func (g *Gateway) connecting(r *http.Request) (resp types.ConnectionResponse) {
	defer g.recoverIn("OnConnecting")
	resp = types.ConnectionResponse{HTTPStatusCode: http.StatusInternalServerError} // if a panic is recovered
	if g.draining.Load() {
		return types.ConnectionResponse{HTTPStatusCode: http.StatusServiceUnavailable, HTTPResponseHeader: map[string]string{"Retry-After": "1"}}
	}
	who, ok := g.authenticate(r)
	if !ok {
		g.log.Warn("refused an agent without a valid token", "remote", r.RemoteAddr)
		return types.ConnectionResponse{HTTPStatusCode: http.StatusUnauthorized, HTTPResponseHeader: map[string]string{"WWW-Authenticate": "Bearer"}}
	}
	l := &link{g: g, plainHTTP: r.Header.Get("Content-Type") == "application/x-protobuf", who: who}
	return types.ConnectionResponse{Accept: true, ConnectionCallbacks: l.callbacks()}
}

func (g *Gateway) recoverIn(callback string) {
	if r := recover(); r != nil {
		g.log.Error("recovered from a panic", "callback", callback, "panic", fmt.Sprint(r), "stack", string(debug.Stack()))
	}
}

func errorResponse(msg *protobufs.AgentToServer, err error) *protobufs.ServerToAgent {
	return &protobufs.ServerToAgent{InstanceUid: msg.GetInstanceUid(), ErrorResponse: &protobufs.ServerErrorResponse{
		Type: protobufs.ServerErrorResponseType_ServerErrorResponseType_BadRequest, ErrorMessage: err.Error(),
	}}
}

// unavailable answers a message whose agent could not be read: the agent
// is to retry after retry (opamp-go v0.23's client only reports it, and its
// next heartbeat tries again).
func unavailable(msg *protobufs.AgentToServer, retry time.Duration) *protobufs.ServerToAgent {
	return &protobufs.ServerToAgent{InstanceUid: msg.GetInstanceUid(), ErrorResponse: &protobufs.ServerErrorResponse{
		Type: protobufs.ServerErrorResponseType_ServerErrorResponseType_Unavailable, ErrorMessage: "agent state unavailable, retry",
		Details: &protobufs.ServerErrorResponse_RetryInfo{RetryInfo: &protobufs.RetryInfo{RetryAfterNanoseconds: uint64(retry)}},
	}}
}

// linkSet tracks the open WebSocket links so that a drain can close them
// and wait for their close callbacks.
type linkSet struct {
	mu     sync.Mutex
	open   map[*link]struct{}
	closed chan struct{} // signalled on every close
}

func (ls *linkSet) add(l *link) {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	ls.open[l] = struct{}{}
}

func (ls *linkSet) remove(l *link) {
	ls.mu.Lock()
	delete(ls.open, l)
	ls.mu.Unlock()
	select {
	case ls.closed <- struct{}{}:
	default:
	}
}

// quiet lists the links whose pinger take (ping.go) marks for a ping at now.
func (ls *linkSet) quiet(now time.Time, every time.Duration) []*link {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	var out []*link
	for l := range ls.open {
		if l.ping != nil && l.ping.take(now, every) {
			out = append(out, l)
		}
	}
	return out
}

func (ls *linkSet) len() int {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	return len(ls.open)
}

func (ls *linkSet) snapshot() []*link {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]*link, 0, len(ls.open))
	for l := range ls.open {
		out = append(out, l)
	}
	return out
}

var errDrainTimeout = errors.New("gateway: connections still open at the drain deadline")
