package gateway

import (
	"context"
	"encoding/binary"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/open-telemetry/opamp-go/protobufs"

	"github.com/myriarch/myriarch/core/agent"
)

// readers judges an agent as every reader does: the liveness rule over the
// leases as stored (adapters/store serves the same to the engine, the planner,
// the API and predictions).
func readers(m *memAgents) agent.Liveness {
	return agent.Liveness{Silence: 90 * time.Second, ReconnectGrace: 10 * time.Second, Source: m}
}

func onlineNow(t *testing.T, m *memAgents, id string, now time.Time) bool {
	t.Helper()
	live, err := readers(m).Snapshot(context.Background())
	must(t, err)
	online, _ := live.Online(m.get(id), now)
	return online
}

// A task that dies (no drain, no renewal) leaves no agent online beyond the
// liveness timeout, although its records still say online.
func TestGateway_DeadTaskTakesItsAgentsOffline(t *testing.T) {
	h := newHarness(t, newMemAgents())
	w, _, err := h.dialWS(token)
	must(t, err)
	w.send(msg(withVersion("1.0")))
	h.g.RenewLease(context.Background()) // at t0: alive until t0 + 90 s
	if a := h.agents.get(id1); !a.Online || a.Task != h.g.Task() {
		t.Fatalf("connected agent stored as %+v", a)
	}
	// Idle heartbeats for an hour, the lease renewed: online throughout, with
	// no write after the connect.
	for i := 0; i < 120; i++ {
		h.clock.advance(30 * time.Second)
		w.send(msg())
		h.g.RenewLease(context.Background())
		if !onlineNow(t, h.agents, id1, h.clock.Now()) {
			t.Fatalf("after %d heartbeats the agent looks offline", i+1)
		}
	}
	if n := h.agents.writeCount(); n != 1 {
		t.Fatalf("%d writes for a connect and 120 idle heartbeats, want 1", n)
	}
	// The task dies: no renewal from now.
	died := h.clock.Now()
	h.clock.advance(90 * time.Second)
	if !onlineNow(t, h.agents, id1, h.clock.Now()) {
		t.Fatal("offline before the lease ran out")
	}
	h.clock.advance(time.Nanosecond)
	if onlineNow(t, h.agents, id1, h.clock.Now()) {
		t.Fatalf("online %v after its task died at %v", h.clock.Now(), died)
	}
	if !h.agents.get(id1).Online {
		t.Fatal("the test means a record left online")
	}
}

// A drain ends the lease: the agents it did not write offline count as
// disconnected then and get the reconnect grace.
func TestGateway_DrainEndsLease(t *testing.T) {
	h := newHarness(t, newMemAgents())
	w, _, err := h.dialWS(token)
	must(t, err)
	w.send(msg(withVersion("1.0")))
	h.g.RenewLease(context.Background())
	h.clock.advance(time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	must(t, h.g.Drain(ctx))
	drained := h.clock.Now()
	if l := h.agents.lease(h.g.Task()); !l.Ended || !l.Until.Equal(drained) {
		t.Fatalf("lease after the drain: %+v", l)
	}
	if !onlineNow(t, h.agents, id1, drained.Add(9*time.Second)) {
		t.Error("offline within the reconnect grace of a drain")
	}
	if onlineNow(t, h.agents, id1, drained.Add(10*time.Second)) {
		t.Error("online after the reconnect grace of a drain")
	}
	h.g.RenewLease(context.Background())
	if l := h.agents.lease(h.g.Task()); !l.Ended {
		t.Error("a drained task renewed its lease")
	}
}

// drainingAgents runs beforeRenew ahead of each lease renewal's write, so
// that a test can end the lease while a renewal is on its way.
type drainingAgents struct {
	*memAgents
	beforeRenew func()
}

func (d *drainingAgents) RenewLease(ctx context.Context, task string, started, until time.Time) error {
	if d.beforeRenew != nil {
		d.beforeRenew()
	}
	return d.memAgents.RenewLease(ctx, task, started, until)
}

// A renewal that reaches the store after the drain ended the lease is
// refused by the store (the lease stays ended) and is no error to log: a
// stack stopped under load logged one at its every shutdown.
func TestGateway_RenewalOvertakenByTheDrainIsQuiet(t *testing.T) {
	logs := &syncBuffer{}
	c := &clock{now: t0}
	agents := &drainingAgents{memAgents: newMemAgents()}
	g, err := New(Config{Now: c.Now, Tokens: []string{token},
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo}))}, agents, memConfigs{})
	must(t, err)
	g.RenewLease(context.Background())
	agents.beforeRenew = func() {
		agents.beforeRenew = nil
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer cancel()
		must(t, g.Drain(ctx))
	}
	g.RenewLease(context.Background())
	if l := agents.lease(g.Task()); !l.Ended {
		t.Errorf("the late renewal revived the ended lease: %+v", l)
	}
	if strings.Contains(logs.String(), "renew gateway lease") {
		t.Errorf("a renewal overtaken by the drain was logged:\n%s", logs.String())
	}
}

// A WebSocket agent not heard from for the timeout is closed and written
// offline by the task (silence is judged in memory).
func TestGateway_SilentWebSocketAgentGoesOffline(t *testing.T) {
	h := newHarness(t, newMemAgents())
	w, _, err := h.dialWS(token)
	must(t, err)
	w.send(msg(withVersion("1.0")))
	h.clock.advance(90 * time.Second)
	h.g.sweep()
	if !h.agents.get(id1).Online {
		t.Fatal("an agent within the timeout was taken offline")
	}
	h.clock.advance(time.Second)
	h.g.sweep()
	h.eventually("the silent agent offline", func() bool { return !h.agents.get(id1).Online })
	if got := h.agents.get(id1).LastSeen; !got.Equal(at(91)) {
		t.Errorf("offline as of %v, want %v", got, at(91))
	}
}

// An idle heartbeat, answered on the connection's goroutine, keeps the
// agent from counting as silent; silence counts from the last one.
func TestGateway_HeartbeatsKeepAnAgentOnline(t *testing.T) {
	h := newHarness(t, newMemAgents())
	w, _, err := h.dialWS(token)
	must(t, err)
	w.send(msg(withVersion("1.0")))
	for range 4 {
		h.clock.advance(60 * time.Second)
		if resp := w.send(msg()); resp.GetErrorResponse() != nil {
			t.Fatal(resp.GetErrorResponse())
		}
		h.g.sweep()
	}
	h.clock.advance(90 * time.Second)
	h.g.sweep()
	if !h.agents.get(id1).Online || h.g.Len() != 1 {
		t.Fatal("an agent that heartbeats was taken offline")
	}
	h.clock.advance(time.Second)
	h.g.sweep()
	h.eventually("the agent offline 91 s after its last heartbeat", func() bool { return !h.agents.get(id1).Online })
	if got := h.agents.get(id1).LastSeen; !got.Equal(at(4*60 + 91)) {
		t.Errorf("offline as of %v, want %v", got, at(4*60+91))
	}
	if got := h.agents.writeCount(); got != 2 {
		t.Errorf("%d writes, want the connect and the offline only", got)
	}
}

// slowAgents is a store that takes its time and fails now and then, and
// counts how many calls run at once.
type slowAgents struct {
	*memAgents
	delay          time.Duration
	inFlight, peak atomic.Int64
	failed         sync.Map // agents whose first save timed out
}

func (s *slowAgents) enter() func() {
	n := s.inFlight.Add(1)
	for p := s.peak.Load(); n > p && !s.peak.CompareAndSwap(p, n); p = s.peak.Load() {
	}
	time.Sleep(s.delay)
	return func() { s.inFlight.Add(-1) }
}

func (s *slowAgents) LoadAgent(ctx context.Context, id string) (agent.Agent, bool, any, error) {
	defer s.enter()()
	return s.memAgents.LoadAgent(ctx, id)
}

func (s *slowAgents) SaveAgent(ctx context.Context, a agent.Agent, v any) (any, error) {
	defer s.enter()()
	if _, again := s.failed.LoadOrStore(a.ID, true); !again && a.ID[len(a.ID)-1]%3 == 0 {
		return v, context.DeadlineExceeded // as a throttled or timed-out request
	}
	return s.memAgents.SaveAgent(ctx, a, v)
}

// A connect storm against a slow store: every agent is stored, store calls
// stay bounded, timeouts (the first save of every third agent) are retried,
// and nothing is logged above info.
func TestGateway_ConnectStormLosesNoAgent(t *testing.T) {
	const agents, concurrency = 10000, 32
	store := &slowAgents{memAgents: newMemAgents(), delay: 200 * time.Microsecond}
	logs := &syncBuffer{}
	c := &clock{now: t0}
	g, err := New(Config{Now: c.Now, Tokens: []string{token}, StoreConcurrency: concurrency, WriteWait: 10 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelInfo})),
		After:  func(d time.Duration) <-chan time.Time { return time.After(min(d, 20*time.Millisecond)) }}, store, memConfigs{})
	must(t, err)
	var wg sync.WaitGroup
	for i := 0; i < agents; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			uid := make([]byte, 16)
			binary.BigEndian.PutUint64(uid[8:], uint64(i+1))
			m := msg(withVersion("1.0"))
			m.InstanceUid = uid
			l := &link{g: g}
			for {
				resp := l.message(context.Background(), nil, m)
				if resp.GetErrorResponse() == nil {
					return
				}
				if resp.GetErrorResponse().GetType() != protobufs.ServerErrorResponseType_ServerErrorResponseType_Unavailable {
					t.Errorf("agent %d: %v", i, resp.GetErrorResponse())
					return
				}
			}
		}()
	}
	wg.Wait()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	g.waitWrites(ctx)
	store.store.Lock()
	stored := 0
	for _, a := range store.store.Agents {
		if a.Online && a.ServiceVersion == "1.0" && a.Task == g.Task() {
			stored++
		}
	}
	store.store.Unlock()
	if stored != agents {
		t.Errorf("%d of %d agents stored", stored, agents)
	}
	t.Logf("peak %d store calls at once", store.peak.Load())
	if p := store.peak.Load(); p > concurrency {
		t.Errorf("%d store calls at once, want at most %d", p, concurrency)
	}
	if strings.Contains(logs.String(), `"level":"ERROR"`) || strings.Contains(logs.String(), `"level":"WARN"`) {
		t.Errorf("a storm that the store absorbs logged:\n%.2000s", logs.String())
	}
	if errors.Is(ctx.Err(), context.DeadlineExceeded) {
		t.Error("writes still queued after a minute")
	}
}
