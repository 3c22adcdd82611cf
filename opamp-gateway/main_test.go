package main

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"errors"
	"io"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/gorilla/websocket"
	"github.com/open-telemetry/opamp-go/protobufs"
	"google.golang.org/protobuf/proto"

	"github.com/myriarch/myriarch/core/agent"
)

func TestParseOptions(t *testing.T) {
	base := map[string]string{"MYRIARCH_TABLE_PREFIX": "dev-", "MYRIARCH_AGENT_TOKENS": "a,b"}
	tests := []struct {
		name    string
		args    []string
		env     map[string]string
		wantErr string // substring; "" = valid
	}{
		{name: "defaults", args: nil, env: base, wantErr: ""},
		{name: "flags override", args: []string{"-listen", "127.0.0.1:0", "-heartbeat", "10s", "-offline-after", "4"}, env: base, wantErr: ""},
		{name: "no table prefix", args: nil, env: map[string]string{"MYRIARCH_AGENT_TOKENS": "a"}, wantErr: "table-prefix"},
		{name: "no tokens", args: nil, env: map[string]string{"MYRIARCH_TABLE_PREFIX": "dev-"}, wantErr: "no agent tokens"},
		{name: "tokens file only", args: []string{"-tokens-file", "/run/secrets/tokens"}, env: map[string]string{"MYRIARCH_TABLE_PREFIX": "dev-"}, wantErr: ""},
		{name: "bad heartbeat", args: []string{"-heartbeat", "often"}, env: base, wantErr: "heartbeat"},
		{name: "zero poll interval", args: []string{"-poll-interval", "0s"}, env: base, wantErr: "poll-interval"},
		{name: "offline after 1", args: []string{"-offline-after", "1"}, env: base, wantErr: "offline-after"}, // a single late heartbeat would take agents offline
		{name: "cert without key", args: []string{"-tls-cert", "c.pem"}, env: base, wantErr: "go together"},
		{name: "url without version", args: []string{"-download-url", "https://x/otelcol"}, env: base, wantErr: "{version}"},
		{name: "bad log level", args: []string{"-log-level", "loud"}, env: base, wantErr: "log-level"},
		{name: "unknown flag", args: []string{"-agent-token", "t"}, env: base, wantErr: "not defined"}, // tokens are never flags
		{name: "debug on loopback", args: []string{"-debug-listen", "127.0.0.1:6060"}, env: base, wantErr: ""},
		{name: "debug on IPv6 loopback", args: []string{"-debug-listen", "[::1]:6060"}, env: base, wantErr: ""},
		{name: "debug on localhost", args: nil, env: withEnv(base, "MYRIARCH_GATEWAY_DEBUG_LISTEN", "localhost:0"), wantErr: ""},
		{name: "debug on every interface", args: []string{"-debug-listen", ":6060"}, env: base, wantErr: "loopback"}, // pprof has no authentication
		{name: "debug on a public address", args: []string{"-debug-listen", "10.0.0.5:6060"}, env: base, wantErr: "loopback"},
		{name: "debug on a name", args: []string{"-debug-listen", "gateway.internal:6060"}, env: base, wantErr: "loopback"},
		{name: "debug without port", args: []string{"-debug-listen", "127.0.0.1"}, env: base, wantErr: "debug-listen"},
		{name: "pings off", args: []string{"-ws-ping", "0"}, env: base, wantErr: ""},
		{name: "package source", args: []string{"-package-checksums-url", "https://m.example.com/{version}/checksums.txt", "-package-signature-url", "https://m.example.com/{version}/a.tar.gz.minisig"}, env: base, wantErr: ""},
		{name: "checksums not over http", args: []string{"-package-checksums-url", "file:///etc/passwd"}, env: base, wantErr: "package-checksums-url"},
		{name: "pings from the environment", args: nil, env: withEnv(base, "MYRIARCH_GATEWAY_WS_PING", "2m"), wantErr: ""},
		{name: "negative ping interval", args: []string{"-ws-ping", "-1s"}, env: base, wantErr: "ws-ping"},
		{name: "bad ping interval", args: nil, env: withEnv(base, "MYRIARCH_GATEWAY_WS_PING", "often"), wantErr: "ws-ping"},
		{name: "no per-source limit", args: []string{"-max-conns-per-source", "0"}, env: base, wantErr: ""},
		{name: "negative per-source limit", args: []string{"-max-conns-per-source", "-1"}, env: base, wantErr: "max-conns-per-source"},
		{name: "per-source limit from the environment", args: nil, env: withEnv(base, "MYRIARCH_GATEWAY_MAX_CONNS_PER_SOURCE", "many"), wantErr: "max-conns-per-source"},
		{name: "no decode slot", args: []string{"-decode-slots", "0"}, env: base, wantErr: "decode-slots"}, // no large message could ever be read
		{name: "zero first-message wait", args: []string{"-first-message-wait", "0s"}, env: base, wantErr: "first-message-wait"},
		{name: "first-message wait from the environment", args: nil, env: withEnv(base, "MYRIARCH_GATEWAY_FIRST_MESSAGE_WAIT", "30s"), wantErr: ""},
		{name: "agent endpoint", args: []string{"-agent-endpoint", "wss://opamp.example.com/v1/opamp"}, env: base, wantErr: ""},
		{name: "agent endpoint without scheme", args: nil, env: withEnv(base, "MYRIARCH_GATEWAY_AGENT_ENDPOINT", "opamp.example.com"), wantErr: "agent-endpoint"},
		{name: "credential required", args: nil, env: withEnv(base, "MYRIARCH_GATEWAY_REQUIRE_AGENT_CREDENTIAL", "true"), wantErr: ""},
		{name: "credential required, not a bool", args: []string{"-require-agent-credential", "yes please"}, env: base, wantErr: "require-agent-credential"},
		{name: "rotation", args: []string{"-credential-rotate-after", "720h"}, env: base, wantErr: ""},
		{name: "negative rotation", args: []string{"-credential-rotate-after", "-1h"}, env: base, wantErr: "credential-rotate-after"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := parseOptions(tt.args, func(k string) string { return tt.env[k] })
			if tt.wantErr == "" && err != nil || tt.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tt.wantErr)) {
				t.Errorf("error %v, want %q", err, tt.wantErr)
			}
		})
	}
	o, err := parseOptions(nil, func(k string) string { return base[k] })
	if err != nil || o.listen != "127.0.0.1:4320" || o.healthListen != "127.0.0.1:8080" || o.heartbeat != 30*time.Second || o.offlineHeartbeats != 3 ||
		o.pollInterval != time.Second || o.downloadURL != "https://example.invalid/otelcol/{version}" || o.logLevel != slog.LevelInfo ||
		o.wsPing != time.Minute || o.firstMessageWait != 10*time.Second || o.maxConnsPerSource != 1000 || o.decodeSlots != 4 ||
		o.agentEndpoint != "" || o.requireCredential || o.rotateAfter != 0 {
		t.Errorf("defaults %+v, %v", o, err)
	}
}

// The identity flags reach the gateway's configuration; the CA is read
// from its file at start.
func TestIdentityOptions(t *testing.T) {
	ca := filepath.Join(t.TempDir(), "ca.pem")
	if err := os.WriteFile(ca, []byte("-----BEGIN CERTIFICATE-----\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	o, err := parseOptions([]string{"-agent-endpoint", "wss://o.example.com/v1/opamp", "-agent-ca-file", ca,
		"-require-agent-credential", "true", "-credential-rotate-after", "720h"}, func(k string) string {
		return map[string]string{"MYRIARCH_TABLE_PREFIX": "dev-", "MYRIARCH_AGENT_TOKENS": "a"}[k]
	})
	if err != nil {
		t.Fatal(err)
	}
	c, err := o.identity()
	if err != nil || c.Endpoint != "wss://o.example.com/v1/opamp" || c.CACertPEM != "-----BEGIN CERTIFICATE-----\n" || !c.RequireCredential || c.RotateAfter != 720*time.Hour {
		t.Errorf("identity %+v, %v", c, err)
	}
	o.agentCAFile = filepath.Join(t.TempDir(), "missing.pem")
	if _, err := o.identity(); err == nil {
		t.Error("a CA file that does not exist is no error")
	}
}

// -ws-ping 0 turns the pings off: the gateway's zero would be its default.
func TestWSPing(t *testing.T) {
	for _, tt := range []struct{ flag, want time.Duration }{
		{flag: 0, want: -1},                              // off
		{flag: time.Minute, want: time.Minute},           // the default
		{flag: 90 * time.Second, want: 90 * time.Second}, // as given
	} {
		if got := wsPing(tt.flag); got != tt.want {
			t.Errorf("wsPing(%v) = %v, want %v", tt.flag, got, tt.want)
		}
	}
	o, err := parseOptions([]string{"-ws-ping", "0"}, func(k string) string {
		return map[string]string{"MYRIARCH_TABLE_PREFIX": "dev-", "MYRIARCH_AGENT_TOKENS": "a"}[k]
	})
	if err != nil || o.wsPing != 0 {
		t.Errorf("-ws-ping 0: %v, %v", o.wsPing, err)
	}
}

func withEnv(env map[string]string, k, v string) map[string]string {
	out := map[string]string{k: v}
	for ek, ev := range env {
		out[ek] = ev
	}
	return out
}

// The debug listener serves pprof, and only when asked for.
func TestServeDebug(t *testing.T) {
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	if srv := serveDebug("", log); srv != nil {
		t.Fatal("a debug listener without -debug-listen")
	}
	rec := httptest.NewRecorder()
	debugHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/pprof/goroutine?debug=1", nil))
	if rec.Code != http.StatusOK || !strings.Contains(rec.Body.String(), "goroutine profile") {
		t.Fatalf("GET /debug/pprof/goroutine: %d %.80q", rec.Code, rec.Body.String())
	}
}

func TestLoadTokens(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	must(t, os.WriteFile(file, []byte("# rotated 2025-03\nnew-secret\n\n  old-secret  \n"), 0o600))
	got, err := options{tokensEnv: " env-secret , ,", tokensFile: file}.loadTokens()
	if err != nil || !slices.Equal(got, []string{"env-secret", "new-secret", "old-secret"}) {
		t.Errorf("tokens %q, %v; want the union of environment and file", got, err)
	}
	if _, err := (options{tokensFile: filepath.Join(t.TempDir(), "missing")}).loadTokens(); err == nil {
		t.Error("a missing tokens file was accepted")
	}
	if _, err := (options{tokensEnv: " , "}).loadTokens(); err == nil {
		t.Error("an empty token set was accepted")
	}
}

// TestServe runs the gateway as main does, on loopback with an in-memory
// store: health, an agent, a token reload, and a drain on shutdown.
func TestServe(t *testing.T) {
	file := filepath.Join(t.TempDir(), "tokens")
	must(t, os.WriteFile(file, []byte("first\n"), 0o600))
	o, err := parseOptions([]string{"-listen", "127.0.0.1:0", "-health-listen", "127.0.0.1:0", "-tokens-file", file, "-drain-timeout", "2s"},
		func(k string) string { return map[string]string{"MYRIARCH_TABLE_PREFIX": "test-"}[k] })
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	reload := make(chan struct{})
	st, opampAddr, healthAddr, done := startServe(t, ctx, o, reload)

	if code, body := get(t, "http://"+healthAddr.String()+"/healthz"); code != http.StatusOK || !strings.HasPrefix(body, "ok") {
		t.Errorf("healthz %d %q, want 200 ok", code, body)
	}
	conn := dial(t, opampAddr, "first")
	sendReport(t, conn)
	if a, ok := st.get("018f3a10-2233-7444-8555-666677778888"); !ok || !a.Online {
		t.Fatalf("agent not recorded: %+v", a)
	}

	must(t, os.WriteFile(file, []byte("second\n"), 0o600)) // rotation done: SIGHUP
	reload <- struct{}{}
	deadline := time.Now().Add(5 * time.Second)
	for refused(opampAddr, "second") || !refused(opampAddr, "first") {
		if time.Now().After(deadline) {
			t.Fatal("the reloaded tokens are not in force")
		}
		time.Sleep(5 * time.Millisecond)
	}

	cancel() // SIGTERM
	must(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	if _, _, err := conn.ReadMessage(); err == nil {
		t.Error("the connection stayed open through the drain")
	}
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("serve after SIGTERM: %v", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("serve did not return after the drain")
	}
	if a, _ := st.get("018f3a10-2233-7444-8555-666677778888"); !a.Online {
		t.Error("the drain took the agent offline: it reconnects to another task")
	}
}

// startServe runs serve on an in-memory store until ctx ends; done yields
// its result.
func startServe(t *testing.T, ctx context.Context, o options, reload chan struct{}) (st *fakeStore, opampAddr, healthAddr net.Addr, done chan error) {
	t.Helper()
	st = &fakeStore{agents: map[string]agent.Agent{}}
	addrs := make(chan [2]net.Addr, 1)
	done = make(chan error, 1)
	go func() {
		done <- serve(ctx, o, st, storeCheck(credentials.NewStaticCredentialsProvider("test", "test", ""), st), slog.New(slog.NewJSONHandler(io.Discard, nil)), reload, func(a, h net.Addr) { addrs <- [2]net.Addr{a, h} })
	}()
	select {
	case a := <-addrs:
		return st, a[0], a[1], done
	case err := <-done:
		t.Fatalf("serve: %v", err)
	}
	return nil, nil, nil, nil
}

// TestServe_TLS serves OpAMP over TLS with a certificate of its own.
func TestServe_TLS(t *testing.T) {
	dir := t.TempDir()
	pool := writeCertificate(t, filepath.Join(dir, "cert.pem"), filepath.Join(dir, "key.pem"))
	o, err := parseOptions([]string{"-listen", "127.0.0.1:0", "-health-listen", "127.0.0.1:0", "-tls-cert", filepath.Join(dir, "cert.pem"), "-tls-key", filepath.Join(dir, "key.pem"), "-ws-ping", "20ms"},
		func(k string) string {
			return map[string]string{"MYRIARCH_TABLE_PREFIX": "test-", "MYRIARCH_AGENT_TOKENS": "tok"}[k]
		})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	st, opampAddr, _, _ := startServe(t, ctx, o, nil)
	dialer := websocket.Dialer{TLSClientConfig: &tls.Config{RootCAs: pool}}
	if _, _, err := websocket.DefaultDialer.Dial("ws://"+opampAddr.String()+"/v1/opamp", http.Header{"Authorization": {"Bearer tok"}}); err == nil {
		t.Error("plain WebSocket accepted on a TLS listener")
	}
	conn, _, err := dialer.Dial("wss://"+opampAddr.String()+"/v1/opamp", http.Header{"Authorization": {"Bearer tok"}})
	must(t, err)
	defer conn.Close()
	sendReport(t, conn)
	if _, ok := st.get("018f3a10-2233-7444-8555-666677778888"); !ok {
		t.Error("agent not recorded over TLS")
	}
	if n := pingsIn(t, conn, 300*time.Millisecond); n != 0 { // a ping could split a frame on TLS (adapters/gateway, ping.go)
		t.Errorf("%d pings over the gateway's own TLS, want none", n)
	}
}

// TestServe_Pings: -ws-ping reaches the gateway, which pings a WebSocket
// agent that says nothing.
func TestServe_Pings(t *testing.T) {
	o, err := parseOptions([]string{"-listen", "127.0.0.1:0", "-health-listen", "127.0.0.1:0", "-ws-ping", "20ms"},
		func(k string) string {
			return map[string]string{"MYRIARCH_TABLE_PREFIX": "test-", "MYRIARCH_AGENT_TOKENS": "tok"}[k]
		})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, opampAddr, _, _ := startServe(t, ctx, o, nil)
	conn := dial(t, opampAddr, "tok")
	sendReport(t, conn)
	if n := pingsIn(t, conn, 300*time.Millisecond); n < 3 {
		t.Errorf("%d pings in 300 ms at 20 ms, want several", n)
	}
}

// pingsIn reads conn for d and counts the pings it was sent; conn is spent
// after (its read timed out).
func pingsIn(t *testing.T, conn *websocket.Conn, d time.Duration) int {
	t.Helper()
	n := 0
	conn.SetPingHandler(func(string) error { n++; return nil })
	must(t, conn.SetReadDeadline(time.Now().Add(d)))
	for {
		if _, _, err := conn.ReadMessage(); err != nil {
			var ne net.Error
			if !errors.As(err, &ne) || !ne.Timeout() {
				t.Fatalf("read: %v", err)
			}
			return n
		}
	}
}

// writeCertificate writes a self-signed certificate for 127.0.0.1 and
// returns a pool that trusts it.
func writeCertificate(t *testing.T, certFile, keyFile string) *x509.CertPool {
	t.Helper()
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	must(t, err)
	tmpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "opamp-gateway test"},
		NotBefore: time.Now().Add(-time.Hour), NotAfter: time.Now().Add(time.Hour),
		IPAddresses: []net.IP{net.IPv4(127, 0, 0, 1)}, KeyUsage: x509.KeyUsageDigitalSignature, ExtKeyUsage: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	must(t, err)
	keyDER, err := x509.MarshalECPrivateKey(key)
	must(t, err)
	must(t, os.WriteFile(certFile, pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), 0o600))
	must(t, os.WriteFile(keyFile, pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: keyDER}), 0o600))
	cert, err := x509.ParseCertificate(der)
	must(t, err)
	pool := x509.NewCertPool()
	pool.AddCert(cert)
	return pool
}

func get(t *testing.T, url string) (int, string) {
	t.Helper()
	resp, err := http.Get(url)
	must(t, err)
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

func dial(t *testing.T, addr net.Addr, token string) *websocket.Conn {
	t.Helper()
	conn, _, err := websocket.DefaultDialer.Dial("ws://"+addr.String()+"/v1/opamp", http.Header{"Authorization": {"Bearer " + token}})
	must(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn
}

func refused(addr net.Addr, token string) bool {
	conn, resp, err := websocket.DefaultDialer.Dial("ws://"+addr.String()+"/v1/opamp", http.Header{"Authorization": {"Bearer " + token}})
	if err == nil {
		conn.Close()
		return false
	}
	return resp != nil && resp.StatusCode == http.StatusUnauthorized
}

// sendReport sends one report and waits for the answer, after which the
// gateway has written.
func sendReport(t *testing.T, conn *websocket.Conn) {
	t.Helper()
	uid := []byte{0x01, 0x8f, 0x3a, 0x10, 0x22, 0x33, 0x74, 0x44, 0x85, 0x55, 0x66, 0x66, 0x77, 0x77, 0x88, 0x88}
	b, err := proto.Marshal(&protobufs.AgentToServer{InstanceUid: uid, AgentDescription: &protobufs.AgentDescription{
		IdentifyingAttributes: []*protobufs.KeyValue{{Key: "service.version", Value: &protobufs.AnyValue{Value: &protobufs.AnyValue_StringValue{StringValue: "0.110.0"}}}}}})
	must(t, err)
	must(t, conn.WriteMessage(websocket.BinaryMessage, append([]byte{0}, b...)))
	must(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, _, err = conn.ReadMessage()
	must(t, err)
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// fakeStore is the smallest store the gateway runs on.
type fakeStore struct {
	mu      sync.Mutex
	agents  map[string]agent.Agent
	pingErr error // what Ping answers
}

func (s *fakeStore) Ping(context.Context) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pingErr
}

func (s *fakeStore) failPing(err error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.pingErr = err
}

func (s *fakeStore) get(id string) (agent.Agent, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	a, ok := s.agents[id]
	return a, ok
}

func (s *fakeStore) GetAgent(_ context.Context, id string) (agent.Agent, bool, error) {
	a, ok := s.get(id)
	return a, ok, nil
}

func (s *fakeStore) LoadAgent(ctx context.Context, id string) (agent.Agent, bool, any, error) {
	a, ok := s.get(id)
	return a, ok, nil, nil
}

func (s *fakeStore) SaveAgent(_ context.Context, a agent.Agent, v any) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.agents[a.ID] = a
	return v, nil
}

func (s *fakeStore) DisconnectAgent(_ context.Context, a agent.Agent, v any) (any, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	stored := s.agents[a.ID]
	stored.Online, stored.LastSeen = false, a.LastSeen
	s.agents[a.ID] = stored
	return v, nil
}

func (s *fakeStore) RenewLease(context.Context, string, time.Time, time.Time) error { return nil }
func (s *fakeStore) EndLease(context.Context, string, time.Time, time.Time) error   { return nil }

func (s *fakeStore) LaggingAgents(context.Context, string, int) ([]agent.Agent, []any, string, error) {
	return nil, nil, "", nil
}

func (s *fakeStore) ConfigByHash(context.Context, string) ([]byte, string, error) {
	return nil, "", errors.New("no configurations here")
}

// -max-conns-per-source reaches the gateway: the second connection of one
// address is refused with 429 and shows in /debug/vars.
func TestServe_ConnectionsPerSource(t *testing.T) {
	o, err := parseOptions([]string{"-listen", "127.0.0.1:0", "-health-listen", "127.0.0.1:0", "-max-conns-per-source", "1"},
		func(k string) string {
			return map[string]string{"MYRIARCH_TABLE_PREFIX": "test-", "MYRIARCH_AGENT_TOKENS": "tok"}[k]
		})
	must(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	_, opampAddr, _, _ := startServe(t, ctx, o, nil)
	url, header := "ws://"+opampAddr.String()+"/v1/opamp", http.Header{"Authorization": {"Bearer tok"}}
	conn, _, err := websocket.DefaultDialer.Dial(url, header)
	must(t, err)
	defer conn.Close()
	if _, resp, err := websocket.DefaultDialer.Dial(url, header); err == nil || resp == nil || resp.StatusCode != http.StatusTooManyRequests {
		t.Fatalf("a second connection from one address: %v, %v; want 429", resp, err)
	}
	rec := httptest.NewRecorder()
	debugHandler().ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/debug/vars", nil))
	if !strings.Contains(rec.Body.String(), `"RefusedPerSource":1`) {
		t.Errorf("/debug/vars without the refusal: %.300s", rec.Body.String())
	}
}
