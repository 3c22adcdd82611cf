package simfleet

import (
	"context"
	"encoding/hex"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/uuid"
	"github.com/open-telemetry/opamp-go/protobufs"
	"github.com/open-telemetry/opamp-go/server"
	"github.com/open-telemetry/opamp-go/server/types"
	"google.golang.org/protobuf/proto"
)

// waitLimit bounds every wait for a report: a deadline, not a sleep.
const waitLimit = 5 * time.Second

// t0 is the fake clock's start.
var t0 = time.Date(2026, 1, 5, 10, 0, 0, 0, time.UTC)

// notifier wakes waiters whenever something changed.
type notifier struct{ ch chan struct{} }

func newNotifier() notifier { return notifier{ch: make(chan struct{})} }

// notify must be called with the owner's lock held.
func (n *notifier) notify() { close(n.ch); n.ch = make(chan struct{}) }

// fakeClock moves only when the test advances it. Agents that sleep register
// a waiter; the test waits until the expected number sleep, then advances.
type fakeClock struct {
	mu      sync.Mutex
	now     time.Time
	waiters []fakeWaiter
	changed notifier
}

type fakeWaiter struct {
	at time.Time
	ch chan time.Time
}

func newFakeClock() *fakeClock { return &fakeClock{now: t0, changed: newNotifier()} }

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) After(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	ch := make(chan time.Time, 1)
	if d <= 0 {
		ch <- c.now
		return ch
	}
	c.waiters = append(c.waiters, fakeWaiter{at: c.now.Add(d), ch: ch})
	c.changed.notify()
	return ch
}

// waitSleeping waits until n agents sleep on the clock.
func (c *fakeClock) waitSleeping(t *testing.T, n int) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		c.mu.Lock()
		waiting, ch := len(c.waiters), c.changed.ch
		c.mu.Unlock()
		if waiting >= n {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			t.Fatalf("timed out waiting for %d sleeping agents (%d sleep)", n, waiting)
		}
	}
}

// move advances the clock by d and wakes every sleeper due by then.
func (c *fakeClock) move(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	kept := c.waiters[:0]
	for _, w := range c.waiters {
		if w.at.After(c.now) {
			kept = append(kept, w)
			continue
		}
		w.ch <- c.now
	}
	c.waiters = kept
}

// seen is what the test server knows of one agent: the last value of each
// field and, in order, the distinct reports it received.
type seen struct {
	conn         types.Connection
	authz        string
	caps         uint64
	attrs        map[string]string
	health       *protobufs.ComponentHealth
	remote       *protobufs.RemoteConfigStatus
	effective    string
	pkgs         *protobufs.PackageStatuses
	messages     int
	disconnected bool
	healthLog    []string // "<healthy> <status>"
	updateLog    []string // status of the update component
	versionLog   []string // "<service.version> with <health when it changed>"
	configLog    []string // "<STATUS> <hash prefix>"
	pkgLog       []string // "<STATUS> <offered> <percent>"
}

// testServer is a minimal OpAMP server (opamp-go) on 127.0.0.1.
type testServer struct {
	url     string
	push    bool // WebSocket: send at once; HTTP: answer the next poll
	mu      sync.Mutex
	agents  map[uuid.UUID]*seen
	queued  map[uuid.UUID][]*protobufs.ServerToAgent
	changed notifier
}

func newTestServer(t *testing.T, ws bool) *testServer {
	t.Helper()
	s := &testServer{push: ws, agents: map[uuid.UUID]*seen{}, queued: map[uuid.UUID][]*protobufs.ServerToAgent{}, changed: newNotifier()}
	srv := server.New(nil)
	handler, connContext, err := srv.Attach(server.Settings{Callbacks: types.Callbacks{
		OnConnecting: func(r *http.Request) types.ConnectionResponse {
			authz := r.Header.Get("Authorization")
			return types.ConnectionResponse{Accept: true, ConnectionCallbacks: types.ConnectionCallbacks{
				OnMessage: func(_ context.Context, conn types.Connection, m *protobufs.AgentToServer) *protobufs.ServerToAgent {
					return s.receive(conn, authz, m)
				},
			}}
		},
	}})
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/v1/opamp", handler)
	hs := httptest.NewUnstartedServer(mux)
	hs.Config.ConnContext = connContext
	hs.Start()
	t.Cleanup(hs.Close)
	s.url = hs.URL + "/v1/opamp"
	if ws {
		s.url = "ws" + strings.TrimPrefix(s.url, "http")
	}
	return s
}

func (s *testServer) receive(conn types.Connection, authz string, m *protobufs.AgentToServer) *protobufs.ServerToAgent {
	uid, err := uuid.FromBytes(m.GetInstanceUid())
	if err != nil {
		return &protobufs.ServerToAgent{}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	a := s.agents[uid]
	if a == nil {
		a = &seen{}
		s.agents[uid] = a
	}
	a.conn, a.authz = conn, authz
	a.messages++
	if m.GetCapabilities() != 0 {
		a.caps = m.GetCapabilities()
	}
	if h := m.GetHealth(); h != nil {
		a.health = h
		a.healthLog = appendChanged(a.healthLog, fmtBool(h.GetHealthy())+" "+h.GetStatus())
		if u := h.GetComponentHealthMap()[UpdateComponent]; u != nil {
			a.updateLog = appendChanged(a.updateLog, u.GetStatus())
		}
	}
	if d := m.GetAgentDescription(); d != nil { // after the health: a message's health is the new version's
		a.attrs = map[string]string{}
		for _, kv := range append(d.GetIdentifyingAttributes(), d.GetNonIdentifyingAttributes()...) {
			a.attrs[kv.GetKey()] = kv.GetValue().GetStringValue()
		}
		lastHealth := "no health" // an agent without ReportsHealth
		if len(a.healthLog) > 0 {
			lastHealth = a.healthLog[len(a.healthLog)-1]
		}
		a.versionLog = appendChanged(a.versionLog, a.attrs["service.version"]+" with "+lastHealth)
	}
	if rc := m.GetRemoteConfigStatus(); rc != nil {
		a.remote = rc
		a.configLog = appendChanged(a.configLog, configEntry(rc))
	}
	if ec := m.GetEffectiveConfig(); ec != nil {
		a.effective = string(ec.GetConfigMap().GetConfigMap()[""].GetBody())
	}
	if ps := m.GetPackageStatuses(); ps != nil {
		a.pkgs = ps
		if p := ps.GetPackages()[""]; p != nil {
			a.pkgLog = appendChanged(a.pkgLog, pkgEntry(p))
		}
	}
	if m.GetAgentDisconnect() != nil {
		a.disconnected = true
	}
	s.changed.notify()
	resp := &protobufs.ServerToAgent{InstanceUid: m.GetInstanceUid()}
	if q := s.queued[uid]; len(q) > 0 {
		resp, s.queued[uid] = q[0], q[1:]
	}
	return resp
}

func appendChanged(log []string, entry string) []string {
	if len(log) > 0 && log[len(log)-1] == entry {
		return log
	}
	return append(log, entry)
}

func fmtBool(b bool) string {
	if b {
		return "healthy"
	}
	return "unhealthy"
}

// configEntry is "<STATUS> <hash hex>".
func configEntry(rc *protobufs.RemoteConfigStatus) string {
	return strings.TrimPrefix(rc.GetStatus().String(), "RemoteConfigStatuses_") + " " + hex.EncodeToString(rc.GetLastRemoteConfigHash())
}

// pkgEntry is "<Status> has <version> offered <version>", with " <p>%" while downloading.
func pkgEntry(p *protobufs.PackageStatus) string {
	e := fmt.Sprintf("%s has %s offered %s", strings.TrimPrefix(p.GetStatus().String(), "PackageStatusEnum_"),
		p.GetAgentHasVersion(), p.GetServerOfferedVersion())
	if d := p.GetDownloadDetails(); d != nil {
		e += fmt.Sprintf(" %g%%", d.GetDownloadPercent())
	}
	return e
}

// send delivers a message to agent n of the fleet.
func (s *testServer) send(t *testing.T, uid uuid.UUID, msg *protobufs.ServerToAgent) {
	t.Helper()
	msg.InstanceUid = uid[:]
	s.mu.Lock()
	a := s.agents[uid]
	if !s.push || a == nil {
		s.queued[uid] = append(s.queued[uid], msg)
		s.mu.Unlock()
		return
	}
	conn := a.conn
	s.mu.Unlock()
	if err := conn.Send(context.Background(), msg); err != nil {
		t.Fatal(err)
	}
}

// wait blocks until cond holds for the agent (deadline waitLimit).
func (s *testServer) wait(t *testing.T, uid uuid.UUID, what string, cond func(a *seen) bool) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		s.mu.Lock()
		a, ch := s.agents[uid], s.changed.ch
		ok := a != nil && cond(a)
		s.mu.Unlock()
		if ok {
			return
		}
		select {
		case <-ch:
		case <-deadline:
			s.mu.Lock()
			defer s.mu.Unlock()
			if a := s.agents[uid]; a != nil {
				t.Fatalf("timed out waiting for %s; health %q, config %q, packages %q", what, a.healthLog, a.configLog, a.pkgLog)
			}
			t.Fatalf("timed out waiting for %s: agent never reported", what)
		}
	}
}

// view returns a copy of what the server knows of the agent.
func (s *testServer) view(uid uuid.UUID) seen {
	s.mu.Lock()
	defer s.mu.Unlock()
	return *s.agents[uid]
}

// harness is a test server, a fake clock and a fleet connected to both.
type harness struct {
	srv   *testServer
	clock *fakeClock
	fleet *Fleet
	cfg   Config
}

// start runs a fleet of n agents with the fake clock, at speed 1 (fake
// time costs nothing), heartbeats off; change adjusts the configuration.
func start(t *testing.T, n int, change func(*Config)) *harness {
	t.Helper()
	return startOn(t, newTestServer(t, true), n, change)
}

// startOn is start against a given server.
func startOn(t *testing.T, srv *testServer, n int, change func(*Config)) *harness {
	t.Helper()
	clock := newFakeClock()
	cfg := DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Clock, cfg.Heartbeat = n, srv.url, "sim-token", clock, 0
	if change != nil {
		change(&cfg)
	}
	f, err := Start(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = f.Stop() })
	h := &harness{srv: srv, clock: clock, fleet: f, cfg: cfg}
	for i := 1; i <= n; i++ {
		h.srv.wait(t, h.uid(i), "the first report", func(a *seen) bool { return a.attrs != nil && a.health != nil })
	}
	return h
}

func (h *harness) uid(n int) uuid.UUID { return InstanceUID(h.cfg.Seed, n) }

// hour is how far the tests move the fake clock per step: past every delay.
const hour = time.Hour

// step lets the given agents go one step further: it waits until they all
// sleep and the server has received everything they reported (so no report
// can be merged into the next), then moves the clock past every delay.
func (h *harness) step(t *testing.T, agents ...int) {
	t.Helper()
	h.clock.waitSleeping(t, len(agents))
	for _, n := range agents {
		h.settle(t, n)
	}
	h.clock.move(hour)
}

// settle waits until the server has what agent n reports of its state now.
func (h *harness) settle(t *testing.T, n int) {
	t.Helper()
	a := h.fleet.agents[n-1]
	a.mu.Lock()
	wantHealth, wantPkgs, version := health(a.health, a.update), packageStatuses(a.pkg), a.version
	reported, remote := a.remote != nil, proto.Clone(a.remote)
	a.mu.Unlock()
	h.srv.wait(t, h.uid(n), "the server to catch up", func(s *seen) bool {
		return proto.Equal(s.health, wantHealth) && proto.Equal(s.pkgs, wantPkgs) &&
			(!reported || proto.Equal(s.remote, remote)) && s.attrs["service.version"] == version
	})
}

// waitFleet waits until cond holds for the fleet's snapshot.
func (h *harness) waitFleet(t *testing.T, what string, cond func([]AgentState) bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	defer cancel()
	if err := h.fleet.Wait(ctx, cond); err != nil {
		t.Fatalf("timed out waiting for %s: %+v", what, h.fleet.Snapshot())
	}
}
