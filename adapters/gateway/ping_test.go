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

// withPings sets the ping interval; with ft the test fires the quiet
// connections' timers and moves the harness's clock (and runs pingQuiet
// itself: Run's passes are a quarter of the interval apart), without it
// both are real, since the passes measure the quiet on the gateway's clock.
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

// The agent is pinged when a whole interval passed without a message from
// it or a ping to it: a pass over the connections sooner after either
// pings nothing.
func TestGateway_PingsQuietWebSocketAgent(t *testing.T) {
	h := newHarness(t, newMemAgents(), withPings(45*time.Second, &fakeTimers{}))
	c := h.dialPings(0)
	c.send(msg(withVersion("1.0")))
	c.next("the answer to the first message")
	pass := func(wantPings int32) {
		t.Helper()
		h.g.pingQuiet()
		h.eventually("the pings written", func() bool { return h.g.pingsInFlight.Load() == 0 })
		h.eventually(fmt.Sprintf("%d pings read", wantPings), func() bool { return c.pings.Load() >= wantPings })
		time.Sleep(10 * time.Millisecond) // no ping but those wanted
		if n := c.pings.Load(); n != wantPings {
			t.Fatalf("%d pings, want %d", n, wantPings)
		}
	}
	pass(0) // just heard from
	h.clock.advance(45 * time.Second)
	pass(1)
	h.clock.advance(30 * time.Second)
	pass(1) // 30 s after the ping
	c.send(msg(withVersion("1.0")))
	c.next("the answer to the heartbeat")
	h.clock.advance(40 * time.Second)
	pass(1) // 40 s after the heartbeat, 70 s after the ping
	h.clock.advance(5 * time.Second)
	pass(2)
	if n := h.g.pingsSent.Load(); n != 2 {
		t.Errorf("%d pings counted as sent, want 2", n)
	}
}

// With the real clock and Run's passes: an agent that says nothing after
// connecting gets a ping every 50 ms or so.
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
			if closer == "agent" {
				must(t, c.conn.Close())
			} else {
				for _, l := range h.g.links.snapshot() {
					_ = l.conn.Disconnect()
				}
			}
			h.eventually("the connection gone", func() bool { return h.g.links.len() == 0 })
			sent := h.g.pingsSent.Load()
			time.Sleep(20 * time.Millisecond) // twenty passes
			if n := h.g.pingsSent.Load(); n != sent || h.g.pingsInFlight.Load() != 0 {
				t.Errorf("%d pings more, %d in flight after the close", n-sent, h.g.pingsInFlight.Load())
			}
			h.eventually("the connection's goroutines gone", func() bool { return runtime.NumGoroutine() <= before })
		})
	}
}

// 0 in opamp-gateway (negative here) sends no pings; a plain HTTP request
// has no WebSocket to ping.
func TestGateway_NoPings(t *testing.T) {
	t.Run("off", func(t *testing.T) {
		h := newHarness(t, newMemAgents(), withPings(-1, &fakeTimers{}))
		c := h.dialPings(0)
		c.send(msg(withVersion("1.0")))
		c.next("the answer to the first message")
		h.clock.advance(time.Hour)
		h.g.pingQuiet()
		time.Sleep(20 * time.Millisecond)
		if c.pings.Load() != 0 || h.g.pingsSent.Load() != 0 {
			t.Errorf("%d pings read, %d sent with pings off", c.pings.Load(), h.g.pingsSent.Load())
		}
	})
	t.Run("plain HTTP", func(t *testing.T) {
		h := newHarness(t, newMemAgents(), withPings(time.Millisecond, nil))
		if resp, _ := h.postHTTP(token, mustMarshal(t, msg(withVersion("1.0")))); resp.StatusCode != http.StatusOK {
			t.Fatalf("status %d", resp.StatusCode)
		}
		time.Sleep(20 * time.Millisecond) // twenty passes
		if n := h.g.links.len(); n != 0 || h.g.pingsSent.Load() != 0 {
			t.Errorf("%d links, %d pings for a plain HTTP request", n, h.g.pingsSent.Load())
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
	t0 := time.Unix(0, 0)
	start := func(t *testing.T) (p *pinger, agent net.Conn) {
		server, agent := net.Pipe()
		t.Cleanup(func() { server.Close(); agent.Close() })
		return newPinger(server, t0), agent
	}
	at := func(d time.Duration) func() time.Time { return func() time.Time { return t0.Add(d) } }
	readPing := func(t *testing.T, agent net.Conn) {
		b := make([]byte, 2)
		if _, err := io.ReadFull(agent, b); err != nil || !bytes.Equal(b, []byte{0x89, 0x00}) {
			t.Errorf("read %x, %v; want a ping frame", b, err)
		}
	}

	t.Run("a ping after each quiet minute", func(t *testing.T) {
		p, agent := start(t)
		if p.take(t0.Add(59*time.Second), time.Minute) {
			t.Fatal("due before a minute of quiet")
		}
		for i, now := range []time.Duration{time.Minute, 2 * time.Minute, 3 * time.Minute} {
			if !p.take(t0.Add(now), time.Minute) {
				t.Fatalf("ping %d not due at %v", i, now)
			}
			go readPing(t, agent)
			if failed, err := p.write(at(now)); err != nil || failed {
				t.Fatalf("ping %d: %v, failed %v", i, err, failed)
			}
			if p.take(t0.Add(now+59*time.Second), time.Minute) {
				t.Fatalf("due 59 s after ping %d", i)
			}
		}
	})
	t.Run("a message puts the ping off", func(t *testing.T) {
		p, _ := start(t)
		p.heardAt(t0.Add(40 * time.Second))
		if p.take(t0.Add(99*time.Second), time.Minute) {
			t.Fatal("due 59 s after a message")
		}
		if !p.take(t0.Add(100*time.Second), time.Minute) {
			t.Fatal("not due a minute after a message")
		}
	})
	t.Run("one ping at a time", func(t *testing.T) {
		p, agent := start(t)
		if !p.take(t0.Add(time.Minute), time.Minute) {
			t.Fatal("not due")
		}
		wrote := make(chan struct{})
		go func() { p.write(at(time.Minute)); close(wrote) }() // nobody reads: the write blocks
		time.Sleep(10 * time.Millisecond)
		if p.take(t0.Add(time.Hour), time.Minute) {
			t.Fatal("a second ping while the first is being written")
		}
		readPing(t, agent)
		<-wrote
		if !p.take(t0.Add(2*time.Minute), time.Minute) {
			t.Error("not due a minute after the ping was written")
		}
	})
	t.Run("stopped while a ping is blocked", func(t *testing.T) {
		p, agent := start(t)
		p.take(t0.Add(time.Minute), time.Minute)
		result := make(chan bool, 1)
		go func() { failed, _ := p.write(at(time.Minute)); result <- failed }()
		time.Sleep(10 * time.Millisecond)
		p.stop() // returns without waiting for the write
		agent.Close()
		if failed := <-result; failed {
			t.Error("a ping cut off by the close counted as failed")
		}
		if p.take(t0.Add(time.Hour), time.Minute) {
			t.Error("due after the stop")
		}
	})
	t.Run("a failed write ends it", func(t *testing.T) {
		p, agent := start(t)
		agent.Close()
		p.take(t0.Add(time.Minute), time.Minute)
		if failed, err := p.write(at(time.Minute)); !errors.Is(err, io.ErrClosedPipe) || !failed {
			t.Errorf("write: %v, failed %v; want the closed pipe, failed", err, failed)
		}
		if p.take(t0.Add(time.Hour), time.Minute) {
			t.Error("due after a failed ping")
		}
		p.stop() // the connection's close comes after
	})
}
