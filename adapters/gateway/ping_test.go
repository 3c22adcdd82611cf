package gateway

import (
	"bytes"
	"crypto/tls"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"net/http/httptest"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"
)

// fakeTimers is an AfterFunc whose timers fire when the test says.
type fakeTimers struct {
	mu     sync.Mutex
	timers []*fakeTimer
}

type fakeTimer struct {
	ft    *fakeTimers
	f     func()
	armed bool
	asked []time.Duration // every interval it was armed for
}

func (ft *fakeTimers) afterFunc(d time.Duration, f func()) Timer {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	t := &fakeTimer{ft: ft, f: f, armed: true, asked: []time.Duration{d}}
	ft.timers = append(ft.timers, t)
	return t
}

func (ft *fakeTimers) all() []*fakeTimer {
	ft.mu.Lock()
	defer ft.mu.Unlock()
	return append([]*fakeTimer(nil), ft.timers...)
}

// pings are the timers but those of the first-message bound (quiet.go),
// which the gateway arms for every WebSocket connection too.
func (ft *fakeTimers) pings() []*fakeTimer {
	return ft.armedFirstFor(func(d time.Duration) bool { return d != DefaultFirstMessageWait })
}

func (ft *fakeTimers) armedFirstFor(match func(time.Duration) bool) []*fakeTimer {
	var out []*fakeTimer
	for _, t := range ft.all() {
		if match(t.intervals()[0]) {
			out = append(out, t)
		}
	}
	return out
}

func (t *fakeTimer) Reset(d time.Duration) bool {
	t.ft.mu.Lock()
	defer t.ft.mu.Unlock()
	was := t.armed
	t.armed, t.asked = true, append(t.asked, d)
	return was
}

func (t *fakeTimer) Stop() bool {
	t.ft.mu.Lock()
	defer t.ft.mu.Unlock()
	was := t.armed
	t.armed = false
	return was
}

// fire runs the timer's function on the caller's goroutine, as the runtime
// would on one of its own; false if it was not armed.
func (t *fakeTimer) fire() bool {
	t.ft.mu.Lock()
	if !t.armed {
		t.ft.mu.Unlock()
		return false
	}
	t.armed = false
	t.ft.mu.Unlock()
	t.f()
	return true
}

func (t *fakeTimer) isArmed() bool {
	t.ft.mu.Lock()
	defer t.ft.mu.Unlock()
	return t.armed
}

func (t *fakeTimer) intervals() []time.Duration {
	t.ft.mu.Lock()
	defer t.ft.mu.Unlock()
	return append([]time.Duration(nil), t.asked...)
}

// withPings sets the ping interval; with ft the test fires the timers and
// moves the harness's clock, without it both are real, since a pinger
// measures the quiet it waits for on the gateway's clock.
func withPings(every time.Duration, ft *fakeTimers) func(*Config) {
	return func(c *Config) {
		c.WSPing = every
		if ft != nil {
			c.AfterFunc = ft.afterFunc
		} else {
			c.Now = time.Now
		}
	}
}

// pingClient is a WebSocket agent (gorilla/websocket, as opamp-go's client)
// that counts the pings it is sent and reads every message.
type pingClient struct {
	t          *testing.T
	conn       *websocket.Conn
	pings      atomic.Int32
	midMessage atomic.Int32 // pings read between the frames of a message
	inMessage  atomic.Bool
	// pause is how long the client stops reading after the first frame of a
	// message, with a small receive buffer: the gateway's write of a large
	// message waits meanwhile, and so do the pings written behind it.
	pause time.Duration
	msgs  chan *protobufs.ServerToAgent
	ended chan error // the read loop's error
}

func (h *harness) dialPings(pause time.Duration) *pingClient {
	h.t.Helper()
	d := *websocket.DefaultDialer
	if pause > 0 {
		d.NetDial = func(network, addr string) (net.Conn, error) {
			conn, err := net.Dial(network, addr)
			if err == nil {
				err = conn.(*net.TCPConn).SetReadBuffer(64 << 10)
			}
			return conn, err
		}
	}
	conn, _, err := d.Dial("ws://"+h.addr+"/v1/opamp", http.Header{"Authorization": {"Bearer " + token}})
	must(h.t, err)
	c := &pingClient{t: h.t, conn: conn, pause: pause, msgs: make(chan *protobufs.ServerToAgent, 16), ended: make(chan error, 1)}
	conn.SetPingHandler(c.pinged)
	go c.read()
	h.t.Cleanup(func() { _ = conn.Close() })
	return c
}

// pinged counts a ping and answers it as gorilla's default handler does.
func (c *pingClient) pinged(data string) error {
	c.pings.Add(1)
	if c.inMessage.Load() {
		c.midMessage.Add(1)
	}
	_ = c.conn.WriteControl(websocket.PongMessage, []byte(data), time.Now().Add(time.Second))
	return nil
}

func (c *pingClient) read() {
	for {
		_, r, err := c.conn.NextReader()
		if err != nil {
			c.ended <- err
			return
		}
		c.inMessage.Store(true)
		time.Sleep(c.pause)
		b, err := io.ReadAll(r)
		c.inMessage.Store(false)
		if err != nil {
			c.ended <- err
			return
		}
		var m protobufs.ServerToAgent
		if err := proto.Unmarshal(b[1:], &m); err != nil {
			c.ended <- fmt.Errorf("a message of %d bytes does not decode: %w", len(b), err)
			return
		}
		c.msgs <- &m
	}
}

func (c *pingClient) send(m *protobufs.AgentToServer) {
	c.t.Helper()
	b, err := proto.Marshal(m)
	must(c.t, err)
	must(c.t, c.conn.WriteMessage(websocket.BinaryMessage, append([]byte{0}, b...)))
}

// next is the next message, or fails the test when none comes or the
// connection broke.
func (c *pingClient) next(what string) *protobufs.ServerToAgent {
	c.t.Helper()
	select {
	case m := <-c.msgs:
		return m
	case err := <-c.ended:
		c.t.Fatalf("waiting for %s: %v", what, err)
	case <-time.After(5 * time.Second):
		c.t.Fatalf("timed out waiting for %s", what)
	}
	return nil
}

// The agent is pinged each time a whole interval passed without a message
// from it: a timer that fires sooner after a message pings nothing and is
// armed again for what remains of the interval since that message.
func TestGateway_PingsWebSocketAgent(t *testing.T) {
	ft := &fakeTimers{}
	h := newHarness(t, newMemAgents(), withPings(45*time.Second, ft))
	c := h.dialPings(0)
	c.send(msg(withVersion("1.0")))
	c.next("the answer to the first message")
	timers := ft.pings()
	if len(timers) != 1 {
		t.Fatalf("%d ping timers for one connection, want 1", len(timers))
	}
	timer := timers[0]
	fire := func(what string) {
		t.Helper()
		if !timer.fire() {
			t.Fatalf("the ping timer not armed %s", what)
		}
	}
	fire("after the connect") // no time passed since the first message
	for range 3 {
		h.clock.advance(45 * time.Second)
		fire("after a ping")
	}
	h.eventually("three pings", func() bool { return c.pings.Load() == 3 })
	h.clock.advance(20 * time.Second)
	c.send(msg(withVersion("1.0"))) // a heartbeat, 20 s into the interval
	c.next("the answer to the heartbeat")
	h.clock.advance(25 * time.Second)
	fire("after the heartbeat") // 25 s after the heartbeat: no ping
	h.clock.advance(20 * time.Second)
	fire("after the wait for the rest") // 45 s after it
	h.eventually("four pings", func() bool { return c.pings.Load() == 4 })

	want := []time.Duration{45 * time.Second, 45 * time.Second, 45 * time.Second, 45 * time.Second, 45 * time.Second, 20 * time.Second, 45 * time.Second}
	if got := timer.intervals(); !slices.Equal(got, want) {
		t.Errorf("the ping timer armed for %v, want %v", got, want)
	}
	if !timer.isArmed() || h.g.pingers.Load() != 1 {
		t.Errorf("armed %v, %d pingers; want the next ping waiting", timer.isArmed(), h.g.pingers.Load())
	}
	time.Sleep(20 * time.Millisecond) // no ping but those counted
	if n := c.pings.Load(); n != 4 {
		t.Errorf("%d pings, want 4", n)
	}
}

// With the real clock: an agent that says nothing after connecting gets a
// ping every 50 ms.
func TestGateway_PingsWithTheRealClock(t *testing.T) {
	h := newHarness(t, newMemAgents(), withPings(50*time.Millisecond, nil))
	c := h.dialPings(0)
	h.eventually("three pings", func() bool { return c.pings.Load() >= 3 })
}

// Pings written every millisecond while configurations of 300 KB are pushed
// to an agent that reads each one only after a pause (so that the
// gateway's write of it waits, and the pings queue behind it) never land
// inside a frame: every configuration arrives whole, the connection stays
// up, and the pings keep coming.
func TestGateway_PingsInterleaveWithLargeMessages(t *testing.T) {
	configs, hashes := largeConfigs(16, 300<<10)
	agents := newMemAgents()
	h := startHarnessWith(t, agents, configs, withPings(time.Millisecond, nil))
	h.agents = agents
	c := h.dialPings(5 * time.Millisecond)
	c.send(msg(withVersion("1.0")))
	c.next("the answer to the first message")
	before := c.pings.Load()
	for _, hash := range hashes {
		h.agents.setDesired(id1, hash, "")
		rc := c.next("the configuration " + hash).GetRemoteConfig()
		body := rc.GetConfig().GetConfigMap()[""].GetBody()
		if got := hex.EncodeToString(rc.GetConfigHash()); got != hash || string(body) != configs[hash] {
			t.Fatalf("configuration %s: got hash %s and %d bytes, want %d", hash, got, len(body), len(configs[hash]))
		}
	}
	during := c.pings.Load() - before
	t.Logf("%d pings during the pushes, %d of them read inside a message", during, c.midMessage.Load())
	if during == 0 {
		t.Error("no ping during the pushes: the test did not interleave them")
	}
}

// A ping written on the raw connection between two frames of a message,
// which RFC 6455 §5.4 allows and the gateway's pings may do, is read by
// gorilla/websocket's client as a ping, and the message stays whole.
func TestRawPingBetweenFragments(t *testing.T) {
	part := bytes.Repeat([]byte("0123456789abcdef"), 1<<10) // larger than gorilla's buffer: a frame of its own
	wrote := make(chan error, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			wrote <- err
			return
		}
		mw, err := conn.NextWriter(websocket.BinaryMessage)
		if err == nil {
			_, err = mw.Write(part) // the first fragment, written at once
		}
		if err == nil {
			_, err = conn.UnderlyingConn().Write(pingFrame)
		}
		if err == nil {
			_, err = mw.Write(part)
		}
		if err == nil {
			err = mw.Close()
		}
		wrote <- err
	}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	must(t, err)
	defer conn.Close()
	c := &pingClient{t: t, conn: conn}
	conn.SetPingHandler(c.pinged)
	_, r, err := conn.NextReader()
	must(t, err)
	c.inMessage.Store(true)
	b, err := io.ReadAll(r)
	must(t, err)
	must(t, <-wrote)
	if !bytes.Equal(b, append(append([]byte(nil), part...), part...)) || c.midMessage.Load() != 1 {
		t.Errorf("read %d bytes (want %d) and %d pings inside the message (want 1)", len(b), 2*len(part), c.midMessage.Load())
	}
}

// The premise of ping.go, hammered: pings written on gorilla's TCP
// connection as fast as it takes them, beside messages that gorilla writes
// as a header and a payload (net.Buffers), never split a frame. (The same
// over TLS corrupted a message in two runs of five: net.Buffers is two
// Writes there, which is why a TLS connection is not pinged.)
func TestRawPingsBesideGorillaWrites(t *testing.T) {
	const messages = 100
	payload := bytes.Repeat([]byte("0123456789abcdef"), 300<<10/16)
	var pings atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		conn, err := (&websocket.Upgrader{}).Upgrade(w, r, nil)
		if err != nil {
			return
		}
		raw := conn.UnderlyingConn()
		if !writesWholeFrames(raw) {
			t.Errorf("a %T is not pinged", raw)
		}
		done := make(chan struct{})
		defer close(done)
		go func() {
			for {
				select {
				case <-done:
					return
				default:
				}
				if _, err := raw.Write(pingFrame); err != nil {
					return
				}
				pings.Add(1)
			}
		}()
		for range messages {
			if conn.WriteMessage(websocket.BinaryMessage, payload) != nil {
				return
			}
		}
	}))
	defer srv.Close()
	conn, _, err := websocket.DefaultDialer.Dial("ws"+strings.TrimPrefix(srv.URL, "http"), nil)
	must(t, err)
	defer conn.Close()
	conn.SetPingHandler(func(string) error { return nil })
	must(t, conn.SetReadDeadline(time.Now().Add(10*time.Second)))
	for i := range messages {
		_, b, err := conn.ReadMessage()
		if err != nil || !bytes.Equal(b, payload) {
			t.Fatalf("message %d: %d bytes, %v; want it whole (%d pings written)", i, len(b), err, pings.Load())
		}
	}
	t.Logf("%d messages whole beside %d pings", messages, pings.Load())
}

// largeConfigs are n configurations of size bytes each, of text that no
// two share, by their hashes.
func largeConfigs(n, size int) (memConfigs, []string) {
	rng := rand.New(rand.NewPCG(1, 2))
	configs, hashes := memConfigs{}, []string(nil)
	for i := range n {
		b := make([]byte, size)
		for j := range b {
			b[j] = 'a' + byte(rng.IntN(26))
		}
		hash := fmt.Sprintf("bb%04x", i)
		configs[hash], hashes = string(b), append(hashes, hash)
	}
	return configs, hashes
}

// The pinger ends with its connection, closed by the agent or by the
// gateway: no timer, no goroutine left.
func TestGateway_PingerStopsWithTheConnection(t *testing.T) {
	for _, closer := range []string{"agent", "gateway"} {
		t.Run(closer, func(t *testing.T) {
			h := newHarness(t, newMemAgents(), withPings(time.Millisecond, nil))
			before := runtime.NumGoroutine()
			c := h.dialPings(0)
			c.send(msg(withVersion("1.0")))
			c.next("the answer to the first message")
			h.eventually("pings", func() bool { return c.pings.Load() >= 3 })
			if n := h.g.pingers.Load(); n != 1 {
				t.Fatalf("%d pingers for one connection", n)
			}
			if closer == "agent" {
				must(t, c.conn.Close())
			} else {
				for _, l := range h.g.links.snapshot() {
					_ = l.conn.Disconnect()
				}
			}
			h.eventually("the pinger ended", func() bool { return h.g.pingers.Load() == 0 })
			h.eventually("the connection's goroutines gone", func() bool { return runtime.NumGoroutine() <= before })
		})
	}
}

// 0 in opamp-gateway (negative here) sends no pings; a plain HTTP request
// has no WebSocket to ping.
func TestGateway_NoPings(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		ft := &fakeTimers{}
		h := newHarness(t, newMemAgents(), withPings(-1, ft))
		c := h.dialPings(0)
		c.send(msg(withVersion("1.0")))
		c.next("the answer to the first message")
		if n := len(ft.pings()); n != 0 || h.g.pingers.Load() != 0 {
			t.Errorf("%d ping timers, %d pingers with pings off", n, h.g.pingers.Load())
		}
	})
	t.Run("plain HTTP", func(t *testing.T) {
		ft := &fakeTimers{}
		h := newHarness(t, newMemAgents(), withPings(time.Millisecond, ft))
		if resp, _ := h.postHTTP(token, mustMarshal(t, msg(withVersion("1.0")))); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		if n := len(ft.pings()); n != 0 || h.g.pingers.Load() != 0 {
			t.Errorf("%d ping timers, %d pingers for a plain HTTP request", n, h.g.pingers.Load())
		}
	})
}

// A ping goes beside gorilla's frames only on a connection that writes each
// Write and each net.Buffers whole: TCP, not TLS (ping.go).
func TestWritesWholeFrames(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	must(t, err)
	defer ln.Close()
	conn, err := net.Dial("tcp", ln.Addr().String())
	must(t, err)
	defer conn.Close()
	pipe, _ := net.Pipe()
	defer pipe.Close()
	for _, tt := range []struct {
		name string
		conn net.Conn
		want bool
	}{
		{name: "TCP", conn: conn, want: true},
		{name: "TLS over TCP", conn: tls.Client(conn, &tls.Config{}), want: false}, // net.Buffers: two Writes
		{name: "pipe", conn: pipe, want: false},
	} {
		if got := writesWholeFrames(tt.conn); got != tt.want {
			t.Errorf("%s: %v, want %v", tt.name, got, tt.want)
		}
	}
}

// The pinger's life over a connection that can be blocked (net.Pipe writes
// only when read) and a timer the test fires.
func TestPinger(t *testing.T) {
	type rig struct {
		p      *pinger
		timer  *fakeTimer
		live   *atomic.Int32
		agent  net.Conn // the other end
		failed chan error
		clock  *clock
	}
	start := func(t *testing.T) rig {
		server, agent := net.Pipe()
		t.Cleanup(func() { server.Close(); agent.Close() })
		ft := &fakeTimers{}
		r := rig{live: &atomic.Int32{}, agent: agent, failed: make(chan error, 2), clock: &clock{now: time.Unix(0, 0)}}
		r.p = startPinger(server, time.Minute, r.clock.Now, ft.afterFunc, func(err error) { r.failed <- err }, r.live)
		r.timer = ft.all()[0]
		return r
	}
	// fire fires the timer a minute after the last: a ping is due.
	fire := func(r rig) bool {
		r.clock.advance(time.Minute)
		return r.timer.fire()
	}
	readPing := func(t *testing.T, r rig) {
		b := make([]byte, 2)
		if _, err := io.ReadFull(r.agent, b); err != nil || !bytes.Equal(b, []byte{0x89, 0x00}) {
			t.Errorf("read %x, %v; want a ping frame", b, err)
		}
	}

	t.Run("pings until stopped", func(t *testing.T) {
		r := start(t)
		for range 3 {
			go readPing(t, r)
			if !fire(r) {
				t.Fatal("not armed again")
			}
		}
		r.p.stop()
		r.p.stop() // again: no second end
		if r.timer.isArmed() || r.live.Load() != 0 {
			t.Errorf("armed %v, %d live after stop", r.timer.isArmed(), r.live.Load())
		}
	})
	t.Run("a message meanwhile puts the ping off", func(t *testing.T) {
		r := start(t)
		r.clock.advance(40 * time.Second)
		r.p.heardAt(r.clock.Now()) // 40 s in: no ping at 60 s, one at 100 s
		r.clock.advance(20 * time.Second)
		fired := make(chan struct{})
		go func() { r.timer.fire(); close(fired) }()
		select { // nobody reads: a ping written blocks
		case <-fired:
		case <-time.After(2 * time.Second):
			t.Fatal("pinged 20 s after a message")
		}
		if got := r.timer.intervals(); !slices.Equal(got, []time.Duration{time.Minute, 40 * time.Second}) {
			t.Fatalf("armed for %v, want the rest of the interval since the message", got)
		}
		go readPing(t, r)
		r.clock.advance(40 * time.Second)
		r.timer.fire()
		if got := r.timer.intervals(); !slices.Equal(got, []time.Duration{time.Minute, 40 * time.Second, time.Minute}) {
			t.Errorf("armed for %v after the ping, want a whole interval", got)
		}
		r.p.stop()
	})
	t.Run("stopped while a ping is blocked", func(t *testing.T) {
		r := start(t)
		fired := make(chan struct{})
		go func() { fire(r); close(fired) }() // nobody reads: the write blocks
		time.Sleep(10 * time.Millisecond)
		r.p.stop() // returns without waiting for the write
		if r.live.Load() != 1 {
			t.Fatalf("%d live while its ping is being written, want 1", r.live.Load())
		}
		r.agent.Close() // the connection closes: the write fails
		<-fired
		if r.live.Load() != 0 || r.timer.isArmed() || len(r.failed) != 0 {
			t.Errorf("%d live, armed %v, %d failures after the close; want ended quietly", r.live.Load(), r.timer.isArmed(), len(r.failed))
		}
	})
	t.Run("a failed write ends it", func(t *testing.T) {
		r := start(t)
		r.agent.Close()
		fire(r)
		if err := receive(t, r.failed, "the failure"); !errors.Is(err, io.ErrClosedPipe) {
			t.Errorf("failure %v", err)
		}
		r.p.stop() // the connection's close comes after
		if r.live.Load() != 0 || r.timer.isArmed() || len(r.failed) != 0 {
			t.Errorf("%d live, armed %v, %d more failures", r.live.Load(), r.timer.isArmed(), len(r.failed))
		}
	})
}
