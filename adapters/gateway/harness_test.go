package gateway

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gorilla/websocket"
	"github.com/open-telemetry/opamp-go/client"
	"github.com/open-telemetry/opamp-go/client/types"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/myriarch/myriarch/core/agent"
)

const token = "s3cret"

// harness is one gateway task on 127.0.0.1 over in-memory stores, polling
// every 10 ms, with a fake clock and captured JSON logs.
type harness struct {
	t      *testing.T
	g      *Gateway
	agents *memAgents
	clock  *clock
	addr   string
	logs   *syncBuffer
}

func newHarness(t *testing.T, agents *memAgents, change ...func(*Config)) *harness {
	t.Helper()
	h := startHarness(t, agents, change...)
	h.agents = agents
	return h
}

// startHarness runs the gateway over any Agents (adapters/store in the
// integration test).
func startHarness(t *testing.T, agents Agents, change ...func(*Config)) *harness {
	t.Helper()
	return startHarnessWith(t, agents, memConfigs{"abcd01": "receivers: {}", "abcd02": "receivers: {otlp: {}}"}, change...)
}

// startHarnessWith runs the gateway with these configurations.
func startHarnessWith(t *testing.T, agents Agents, configs Configs, change ...func(*Config)) *harness {
	t.Helper()
	h := &harness{t: t, clock: &clock{now: t0}, logs: &syncBuffer{}}
	log := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	cfg := Config{Now: h.clock.Now, Logger: log, Tokens: []string{"old-token", token}, PollInterval: 10 * time.Millisecond, MaxMessageBytes: 64 << 10}
	for _, c := range change {
		c(&cfg)
	}
	g, err := New(cfg, agents, configs)
	if err != nil {
		t.Fatal(err)
	}
	handler, connContext, err := g.Attach()
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/opamp", handler)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{Handler: mux, ConnContext: connContext, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	ctx, cancel := context.WithCancel(context.Background())
	go g.Run(ctx)
	h.g, h.addr = g, ln.Addr().String()
	t.Cleanup(func() {
		cancel()
		_ = srv.Close()
		dctx, dcancel := context.WithTimeout(context.Background(), 2*time.Second)
		defer dcancel()
		_ = g.Drain(dctx)
	})
	return h
}

// eventually polls cond until it holds or 5 s pass.
func (h *harness) eventually(what string, cond func() bool) {
	h.t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			h.t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(2 * time.Millisecond)
	}
}

// logged reports whether a log line with this level and message was written.
func (h *harness) logged(level, msg string) bool {
	for _, line := range strings.Split(h.logs.String(), "\n") {
		var rec struct{ Level, Msg string }
		if json.Unmarshal([]byte(line), &rec) == nil && rec.Level == level && rec.Msg == msg {
			return true
		}
	}
	return false
}

type syncBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// testAgent is a real opamp-go client that hands what it receives to the test.
type testAgent struct {
	c       client.OpAMPClient
	configs chan *protobufs.AgentRemoteConfig
	offers  chan *protobufs.PackagesAvailable
	failed  chan error
	once    sync.Once
}

const agentCaps = protobufs.AgentCapabilities_AgentCapabilities_ReportsStatus |
	protobufs.AgentCapabilities_AgentCapabilities_AcceptsRemoteConfig |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsRemoteConfig |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsHealth |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsHeartbeat |
	protobufs.AgentCapabilities_AgentCapabilities_AcceptsPackages |
	protobufs.AgentCapabilities_AgentCapabilities_ReportsPackageStatuses |
	// Like the supervisor: so the gateway leaves the heartbeat (the plain
	// HTTP polling interval) at the fast one the test sets.
	protobufs.AgentCapabilities_AgentCapabilities_AcceptsOpAMPConnectionSettings

// startAgent connects a client over "ws" or "http" with a bearer token,
// reporting version 0.110.0 and a healthy collector.
func (h *harness) startAgent(transport, bearerToken string) *testAgent {
	h.t.Helper()
	a := &testAgent{configs: make(chan *protobufs.AgentRemoteConfig, 4), offers: make(chan *protobufs.PackagesAvailable, 4), failed: make(chan error, 16)}
	poll := 20 * time.Millisecond
	if transport == "ws" {
		a.c = client.NewWebSocket(nil)
	} else {
		a.c = client.NewHTTP(nil)
	}
	must(h.t, a.c.SetAgentDescription(desc([]*protobufs.KeyValue{str("service.name", "otelcol"), str("service.version", "v0.110.0")},
		str("host.name", "host-1"), str("site.timezone", "Europe/Berlin"))))
	must(h.t, a.c.SetHealth(hl(true, agent.StatusOK, "", 1, nil)))
	err := a.c.Start(context.Background(), types.StartSettings{
		OpAMPServerURL:        transport + "://" + h.addr + "/v1/opamp",
		Header:                http.Header{"Authorization": {"Bearer " + bearerToken}},
		InstanceUid:           types.InstanceUid(uid1),
		Capabilities:          agentCaps,
		PackagesStateProvider: &memPackages{},
		HeartbeatInterval:     &poll,
		Callbacks: types.Callbacks{
			OnMessage: func(_ context.Context, m *types.MessageData) {
				if m.RemoteConfig != nil {
					a.configs <- m.RemoteConfig
				}
				if m.PackagesAvailable != nil {
					a.offers <- m.PackagesAvailable
				}
			},
			OnConnectFailed: func(_ context.Context, err error) {
				select {
				case a.failed <- err:
				default:
				}
			},
		},
	})
	must(h.t, err)
	h.t.Cleanup(func() { _ = a.stop() })
	return a
}

// stop stops the client once: opamp-go's Stop blocks when called again.
func (a *testAgent) stop() error {
	var err error
	a.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		err = a.c.Stop(ctx)
	})
	return err
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

func receive[T any](t *testing.T, ch <-chan T, what string) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(5 * time.Second):
		t.Fatalf("timed out waiting for %s", what)
		var zero T
		return zero
	}
}

// rawWS is a WebSocket agent that sends exactly the bytes a test wants.
type rawWS struct {
	t    *testing.T
	conn *websocket.Conn
}

func (h *harness) dialWS(bearerToken string) (*rawWS, *http.Response, error) {
	conn, resp, err := websocket.DefaultDialer.Dial("ws://"+h.addr+"/v1/opamp", http.Header{"Authorization": {"Bearer " + bearerToken}})
	if err != nil {
		return nil, resp, err
	}
	h.t.Cleanup(func() { _ = conn.Close() })
	return &rawWS{t: h.t, conn: conn}, resp, nil
}

// send writes one framed AgentToServer and returns the gateway's answer:
// the gateway answers after it has written, so the store is settled then.
func (w *rawWS) send(m *protobufs.AgentToServer) *protobufs.ServerToAgent {
	w.t.Helper()
	b, err := proto.Marshal(m)
	must(w.t, err)
	w.sendBytes(append([]byte{0}, b...))
	return w.read()
}

func (w *rawWS) sendBytes(b []byte) {
	w.t.Helper()
	must(w.t, w.conn.WriteMessage(websocket.BinaryMessage, b))
}

func (w *rawWS) read() *protobufs.ServerToAgent {
	w.t.Helper()
	must(w.t, w.conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, b, err := w.conn.ReadMessage()
	must(w.t, err)
	var out protobufs.ServerToAgent
	must(w.t, proto.Unmarshal(b[1:], &out))
	return &out
}

// postHTTP sends one plain HTTP OpAMP request.
func (h *harness) postHTTP(bearerToken string, body []byte) (*http.Response, *protobufs.ServerToAgent) {
	h.t.Helper()
	req, err := http.NewRequest(http.MethodPost, "http://"+h.addr+"/v1/opamp", bytes.NewReader(body))
	must(h.t, err)
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("Authorization", "Bearer "+bearerToken)
	resp, err := http.DefaultClient.Do(req)
	must(h.t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	must(h.t, err)
	var out protobufs.ServerToAgent
	if resp.StatusCode == http.StatusOK {
		must(h.t, proto.Unmarshal(b, &out))
	}
	return resp, &out
}

// memPackages is the smallest PackagesStateProvider: one top-level package.
type memPackages struct {
	mu       sync.Mutex
	allHash  []byte
	statuses *protobufs.PackageStatuses
}

func (p *memPackages) AllPackagesHash() ([]byte, error)                  { return p.allHash, nil }
func (p *memPackages) SetAllPackagesHash(h []byte) error                 { p.allHash = h; return nil }
func (p *memPackages) Packages() ([]string, error)                       { return []string{""}, nil }
func (p *memPackages) SetPackageState(string, types.PackageState) error  { return nil }
func (p *memPackages) CreatePackage(string, protobufs.PackageType) error { return nil }
func (p *memPackages) FileContentHash(string) ([]byte, error)            { return nil, nil }
func (p *memPackages) DeletePackage(string) error                        { return nil }
func (p *memPackages) PackageState(string) (types.PackageState, error) {
	return types.PackageState{Exists: true, Type: protobufs.PackageType_PackageType_TopLevel, Version: "0.110.0"}, nil
}
func (p *memPackages) UpdateContent(context.Context, string, io.Reader, []byte, []byte) error {
	return nil
}
func (p *memPackages) LastReportedStatuses() (*protobufs.PackageStatuses, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.statuses, nil
}
func (p *memPackages) SetLastReportedStatuses(s *protobufs.PackageStatuses) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.statuses = s
	return nil
}
