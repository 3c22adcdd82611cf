package gateway

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"io"
	"net/http"
	"runtime"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/open-telemetry/opamp-go/protobufs"
)

// heapBound is what a hostile agent may add to the gateway's heap: the
// guard stops a message at MaxMessageBytes (8 MiB), which gorilla may hold
// with its buffer's growth, and the decode slots bound the rest.
const heapBound = 64 << 20

// heapPeak samples the heap while run runs and returns its peak above the
// heap before it (after a GC).
func heapPeak(t *testing.T, run func()) (before, peak uint64) {
	t.Helper()
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	before = ms.HeapAlloc
	var top atomic.Uint64
	stop := make(chan struct{})
	sampled := make(chan struct{})
	go func() {
		defer close(sampled)
		var ms runtime.MemStats
		for {
			runtime.ReadMemStats(&ms)
			if ms.HeapAlloc > top.Load() {
				top.Store(ms.HeapAlloc)
			}
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
			}
		}
	}()
	run()
	close(stop)
	<-sampled
	if p := top.Load(); p > before {
		return before, p - before
	}
	return before, 0
}

func withDefaultMessageLimit(c *Config) { c.MaxMessageBytes = DefaultMaxMessageBytes }

// closeCode reads until the connection ends and returns its close code (0:
// it ended without a close frame).
func closeCode(conn *websocket.Conn, within time.Duration) (int, error) {
	_ = conn.SetReadDeadline(time.Now().Add(within))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			var ce *websocket.CloseError
			if errors.As(err, &ce) {
				return ce.Code, nil
			}
			return 0, err
		}
	}
}

// An agent with the token sends a 256 MiB message in frames: the gateway
// closes the connection with 1009 before holding more than its limit, and
// its heap stays within heapBound.
func TestGateway_HugeWebSocketMessage_ClosedWith1009_HeapBounded(t *testing.T) {
	h := newHarness(t, newMemAgents(), withDefaultMessageLimit)
	w, _, err := h.dialWS(token)
	must(t, err)
	code := make(chan int, 1)
	go func() {
		c, _ := closeCode(w.conn, 30*time.Second)
		code <- c
	}()
	var sent int
	_, peak := heapPeak(t, func() {
		nw, err := w.conn.NextWriter(websocket.BinaryMessage)
		must(t, err)
		chunk := make([]byte, 1<<20)
		for sent < 256<<20 {
			if len(code) > 0 {
				return
			}
			n, err := nw.Write(chunk)
			sent += n
			if err != nil {
				return
			}
		}
	})
	if c := <-code; c != websocket.CloseMessageTooBig {
		t.Errorf("close code %d, want 1009 (message too big)", c)
	}
	t.Logf("sent %d MiB before the close; heap peak %.1f MB above idle", sent>>20, float64(peak)/1e6)
	if peak > heapBound {
		t.Errorf("heap grew %.1f MB, want under %d MB", float64(peak)/1e6, heapBound>>20)
	}
	if s := h.g.Stats(); s.TooBig != 1 {
		t.Errorf("stats %+v, want one message too big", s)
	}
	if !h.logged("WARN", "closed a WebSocket connection: message too big") {
		t.Error("no log line for the refused message")
	}
}

// A frame header announcing 2^62 bytes closes the connection at once.
func TestGateway_FrameHeaderOf2To62Bytes_ClosedAtOnce(t *testing.T) {
	h := newHarness(t, newMemAgents(), withDefaultMessageLimit)
	w, _, err := h.dialWS(token)
	must(t, err)
	header := []byte{0x82, 0x80 | 127, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4}
	binary.BigEndian.PutUint64(header[2:10], 1<<62)
	_, err = w.conn.UnderlyingConn().Write(header)
	must(t, err)
	start := time.Now()
	c, err := closeCode(w.conn, 5*time.Second)
	if err != nil || c != websocket.CloseMessageTooBig {
		t.Fatalf("close code %d (%v), want 1009", c, err)
	}
	if d := time.Since(start); d > time.Second {
		t.Errorf("closed after %v, want at once", d)
	}
}

// A gzip bomb of 512 MiB over plain HTTP is answered 413 after at most the
// limit was inflated; the heap stays within heapBound.
func TestGateway_GzipBomb_413_HeapBounded(t *testing.T) {
	h := newHarness(t, newMemAgents(), withDefaultMessageLimit)
	var bomb bytes.Buffer
	zw, err := gzip.NewWriterLevel(&bomb, gzip.BestCompression)
	must(t, err)
	zero := make([]byte, 1<<20)
	for range 512 {
		_, err = zw.Write(zero)
		must(t, err)
	}
	must(t, zw.Close())
	zero = nil
	var status int
	_, peak := heapPeak(t, func() {
		req, err := http.NewRequest(http.MethodPost, "http://"+h.addr+"/v1/opamp", bytes.NewReader(bomb.Bytes()))
		must(t, err)
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("Content-Encoding", "gzip")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		status = resp.StatusCode
	})
	t.Logf("gzip bomb of %d KiB on the wire; heap peak %.1f MB above idle", bomb.Len()>>10, float64(peak)/1e6)
	if status != http.StatusRequestEntityTooLarge {
		t.Errorf("status %d, want 413", status)
	}
	if peak > heapBound {
		t.Errorf("heap grew %.1f MB, want under %d MB", float64(peak)/1e6, heapBound>>20)
	}
	if s := h.g.Stats(); s.TooBig != 1 {
		t.Errorf("stats %+v, want one message too big", s)
	}
}

// A gzipped message within the limit still reaches the gateway, and a body
// that is not gzip is refused as opamp-go refuses it: 400.
func TestGateway_GzippedMessage_Handled(t *testing.T) {
	h := newHarness(t, newMemAgents())
	var body bytes.Buffer
	zw := gzip.NewWriter(&body)
	_, _ = zw.Write(mustMarshal(t, msg(withVersion("1.0"))))
	must(t, zw.Close())
	for _, c := range []struct {
		name string
		body []byte
		want int
	}{
		{name: "gzip", body: body.Bytes(), want: http.StatusOK},
		{name: "not gzip", body: []byte("plain"), want: http.StatusBadRequest},
	} {
		req, err := http.NewRequest(http.MethodPost, "http://"+h.addr+"/v1/opamp", bytes.NewReader(c.body))
		must(t, err)
		req.Header.Set("Content-Type", "application/x-protobuf")
		req.Header.Set("Content-Encoding", "gzip")
		req.Header.Set("Authorization", "Bearer "+token)
		resp, err := http.DefaultClient.Do(req)
		must(t, err)
		resp.Body.Close()
		if resp.StatusCode != c.want {
			t.Errorf("%s: status %d, want %d", c.name, resp.StatusCode, c.want)
		}
	}
	if n := h.agents.writeCount(); n != 1 {
		t.Errorf("%d writes, want the gzipped message's", n)
	}
}

// Without a token nothing of the body is read: 401, not 413.
func TestGateway_GzipBombWithoutToken_401(t *testing.T) {
	h := newHarness(t, newMemAgents())
	resp, _ := h.postHTTP("wrong", bytes.Repeat([]byte{0}, 1<<20))
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("status %d, want 401", resp.StatusCode)
	}
}

func quietTimers(ft *fakeTimers) []*fakeTimer {
	return ft.armedFirstFor(func(d time.Duration) bool { return d == DefaultFirstMessageWait })
}

// A connection that authenticates and sends nothing is closed when the
// first-message bound passes; one that opened a session is left to the
// liveness sweep; one whose message opened none gets the liveness timeout.
func TestGateway_QuietConnections(t *testing.T) {
	t.Run("nothing sent", func(t *testing.T) {
		ft := &fakeTimers{}
		h := newHarness(t, newMemAgents(), withPings(-1, ft))
		w, _, err := h.dialWS(token)
		must(t, err)
		h.eventually("the quiet timer", func() bool { return len(quietTimers(ft)) == 1 })
		if !quietTimers(ft)[0].fire() {
			t.Fatal("the quiet timer was not armed")
		}
		if _, _, err := w.conn.ReadMessage(); err == nil {
			t.Fatal("a message on a connection that should be closed")
		}
		if s := h.g.Stats(); s.Quiet != 1 {
			t.Errorf("stats %+v, want one quiet connection closed", s)
		}
		h.eventually("the link gone", func() bool { return h.g.Stats().Connections == 0 })
	})
	t.Run("session opened", func(t *testing.T) {
		ft := &fakeTimers{}
		h := newHarness(t, newMemAgents(), withPings(-1, ft))
		w, _, err := h.dialWS(token)
		must(t, err)
		w.send(msg(withVersion("1.0")))
		if quietTimers(ft)[0].fire() {
			t.Error("the quiet timer still armed after a session opened")
		}
		if resp := w.send(msg()); resp.ErrorResponse != nil {
			t.Errorf("the agent's connection did not stay: %v", resp)
		}
	})
	t.Run("no session opened", func(t *testing.T) {
		ft := &fakeTimers{}
		h := newHarness(t, newMemAgents(), withPings(-1, ft))
		w, _, err := h.dialWS(token)
		must(t, err)
		w.send(&protobufs.AgentToServer{InstanceUid: []byte("short")})
		q := quietTimers(ft)[0]
		if got := q.intervals(); len(got) < 2 || got[len(got)-1] != h.g.timeout {
			t.Errorf("quiet timer armed for %v, want %v then the liveness timeout %v", got, DefaultFirstMessageWait, h.g.timeout)
		}
		if !q.fire() {
			t.Fatal("the quiet timer was not armed again")
		}
		if _, _, err := w.conn.ReadMessage(); err == nil {
			t.Fatal("a message on a connection that should be closed")
		}
	})
}

// A first message that arrived within the first-message bound is not cut
// off by it while it is handled: its store reads may wait for a slot longer
// than the bound (a connect storm). Closed, the agent would send it again on
// a new connection, and under load no session would ever open.
func TestGateway_FirstMessageHandledPastTheBound_ConnectionKept(t *testing.T) {
	ft := &fakeTimers{}
	agents := newMemAgents()
	gate := make(chan struct{})
	agents.loadGate = gate
	h := newHarness(t, agents, withPings(-1, ft))
	w, _, err := h.dialWS(token)
	must(t, err)
	h.eventually("the quiet timer", func() bool { return len(quietTimers(ft)) == 1 })
	q := quietTimers(ft)[0]
	answered := make(chan *protobufs.ServerToAgent, 1)
	go func() { answered <- w.send(msg(withVersion("1.0"))) }()
	h.eventually("the first message's agent read under way", func() bool {
		agents.mu.Lock()
		defer agents.mu.Unlock()
		return agents.loads > 0
	})
	if got := q.intervals(); len(got) != 2 || got[1] != h.g.timeout {
		t.Errorf("while the first message is handled the quiet timer is armed for %v, want %v then the liveness timeout %v", got, DefaultFirstMessageWait, h.g.timeout)
	}
	close(gate)
	if resp := <-answered; resp.ErrorResponse != nil {
		t.Fatalf("first message answered %v", resp.ErrorResponse)
	}
	if q.fire() {
		t.Error("the quiet timer still armed after the session opened")
	}
	if s := h.g.Stats(); s.Quiet != 0 {
		t.Errorf("stats %+v, want no quiet connection closed", s)
	}
}

// The (N+1)th WebSocket connection of one source is refused with 429 and
// counted; the refusals are logged once per interval; a closed connection
// makes room.
func TestGateway_ConnectionsPerSource(t *testing.T) {
	h := newHarness(t, newMemAgents(), func(c *Config) { c.MaxConnsPerSource = 2 })
	first, _, err := h.dialWS(token)
	must(t, err)
	_, _, err = h.dialWS(token)
	must(t, err)
	for range 3 {
		_, resp, err := h.dialWS(token)
		if err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests || resp.Header.Get("Retry-After") == "" {
			t.Fatalf("a third connection: %v, %v; want 429 with Retry-After", resp, err)
		}
	}
	// The count of open connections moves when the gateway's OnConnected
	// runs, which may be a moment after the client's dial returned.
	h.eventually("3 refused and 2 open in the stats", func() bool {
		s := h.g.Stats()
		return s.RefusedPerSource == 3 && s.Connections == 2
	})
	if n := strings.Count(h.logs.String(), "refused WebSocket connections over the per-source limit"); n != 1 {
		t.Errorf("%d log lines for 3 refusals within a minute, want 1", n)
	}
	h.clock.advance(refusalLogEvery)
	if _, _, err := h.dialWS(token); err == nil {
		t.Fatal("a third connection accepted")
	}
	// The line a minute later counts the two refusals not logged and its own.
	if !strings.Contains(h.logs.String(), `"refused":1,`) || !strings.Contains(h.logs.String(), `"refused":3,`) {
		t.Errorf("want a line for the first refusal and one for the next three a minute later:\n%s", h.logs.String())
	}
	must(t, first.conn.Close())
	h.eventually("a connection allowed again", func() bool {
		_, _, err := h.dialWS(token)
		return err == nil
	})
}

// With one decode slot held by a large message in flight, another large
// message waits SlotWait and is refused (1013 on a WebSocket, 503 over
// HTTP), while a small one goes through; the slot comes back once the
// message was handled.
func TestGateway_DecodeSlots(t *testing.T) {
	h := newHarness(t, newMemAgents(), func(c *Config) { c.DecodeSlots, c.SlotWait = 1, 50*time.Millisecond })
	a, _, err := h.dialWS(token)
	must(t, err)
	nw, err := a.conn.NextWriter(websocket.BinaryMessage)
	must(t, err)
	big := mustMarshal(t, msg(withDesc(desc([]*protobufs.KeyValue{str("blob", strings.Repeat("x", 40<<10))}))))
	_, err = nw.Write(append([]byte{0}, big[:30<<10]...)) // frames of 4 KiB leave: over 16 KiB
	must(t, err)
	h.eventually("the slot taken", func() bool { return h.g.Stats().DecodeSlotsInUse == 1 })

	b, _, err := h.dialWS(token)
	must(t, err)
	must(t, b.conn.WriteMessage(websocket.BinaryMessage, append([]byte{0}, big...)))
	if c, err := closeCode(b.conn, 5*time.Second); c != closeTryAgainLater {
		t.Errorf("close code %d (%v), want 1013", c, err)
	}
	resp, _ := h.postHTTP(token, big)
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" {
		t.Errorf("plain HTTP: status %d, want 503 with Retry-After", resp.StatusCode)
	}
	if resp, _ := h.postHTTP(token, mustMarshal(t, msg(withVersion("1.0")))); resp.StatusCode != http.StatusOK {
		t.Errorf("a small message: status %d, want 200", resp.StatusCode)
	}
	_, err = nw.Write(big[30<<10:])
	must(t, err)
	must(t, nw.Close())
	a.read()
	// The slot is given back once the message was handled, which may be a
	// moment after its answer reached the client.
	h.eventually("the slot back and 2 refusals", func() bool {
		s := h.g.Stats()
		return s.DecodeSlotsInUse == 0 && s.NoDecodeSlot == 2
	})
}
