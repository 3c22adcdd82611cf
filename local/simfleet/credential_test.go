package simfleet

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/gateway"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/local/storetest"
)

// lockedBuffer collects the gateway's log lines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) count(msg string) int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return strings.Count(b.buf.String(), `"msg":"`+msg+`"`)
}

// gatewayOn runs a gateway task over st on a loopback port.
func gatewayOn(t *testing.T, st *store.Store, logs *lockedBuffer) string {
	t.Helper()
	g, err := gateway.New(gateway.Config{Now: time.Now, Tokens: []string{"fleet-token"},
		Logger: slog.New(slog.NewJSONHandler(logs, &slog.HandlerOptions{Level: slog.LevelDebug}))}, st, st)
	if err != nil {
		t.Fatal(err)
	}
	handler, connContext, err := g.Attach()
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.Handle("/v1/opamp", handler)
	srv := &http.Server{Handler: mux, ConnContext: connContext, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	ctx, cancel := context.WithCancel(context.Background())
	go g.Run(ctx)
	t.Cleanup(func() { cancel(); _ = srv.Close() })
	return "ws://" + ln.Addr().String() + "/v1/opamp"
}

// The simulated fleet enrolls with the fleet's token, takes the credential
// the gateway offers, reconnects with it and keeps it in its state: a
// restarted fleet comes back as itself without enrolling again, while the
// same agents without their state are refused (a bound UID with the
// fleet's token).
func TestFleet_ReconnectsWithItsCredential(t *testing.T) {
	st := storetest.New(t)
	logs := &lockedBuffer{}
	endpoint := gatewayOn(t, st, logs)
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.StateDir, cfg.Heartbeat = 3, endpoint, "fleet-token", dir, time.Second
	cfg.Logger = slog.New(slog.DiscardHandler)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()

	digests := func() map[string]string {
		out := map[string]string{}
		for n := 1; n <= cfg.N; n++ {
			r, err := st.GetAgentRecord(ctx, InstanceUID(cfg.Seed, n).String())
			if err != nil {
				t.Fatal(err)
			}
			if r != nil {
				out[HostName(n)] = r.Credential.Digest
			}
		}
		return out
	}
	kept := func() map[string]string {
		out := map[string]string{}
		for n := 1; n <= cfg.N; n++ {
			b, err := os.ReadFile(filepath.Join(dir, HostName(n)+".json"))
			if err != nil {
				continue
			}
			var p persisted
			if json.Unmarshal(b, &p) == nil && p.Credential != "" {
				d := sha256.Sum256([]byte(p.Credential))
				out[HostName(n)] = hex.EncodeToString(d[:])
			}
		}
		return out
	}
	fleet, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "every agent enrolled and kept its credential", func() bool {
		d, k := digests(), kept()
		if len(k) != cfg.N {
			return false
		}
		for host, digest := range k {
			if d[host] != digest {
				return false
			}
		}
		return true
	})
	eventually(t, "every agent connected with its credential", func() bool {
		for _, a := range fleet.Snapshot() {
			if !a.Connected {
				return false
			}
		}
		return logs.count("refused a connection that claims another agent's identity") == 0
	})
	bound := digests()
	if err := fleet.Stop(); err != nil {
		t.Fatal(err)
	}

	again, err := Start(ctx, cfg) // the same agents, from their state
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, "the restarted fleet online as itself", func() bool {
		for n := 1; n <= cfg.N; n++ {
			a, _, err := st.GetAgent(ctx, InstanceUID(cfg.Seed, n).String())
			if err != nil || !a.Online {
				return false
			}
		}
		return true
	})
	if logs.count("agent enrolled: credential bound and offered") != cfg.N || logs.count("refused a connection that claims another agent's identity") != 0 {
		t.Fatalf("the restarted fleet enrolled again or was refused:\n%s", logs.buf.String())
	}
	if got := digests(); !equalMaps(got, bound) {
		t.Fatalf("credentials changed across the restart: %v, were %v", got, bound)
	}
	if err := again.Stop(); err != nil {
		t.Fatal(err)
	}

	cfg.StateDir = "" // the same UIDs without their credentials: impostors now
	lost, err := Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer lost.Stop()
	eventually(t, "agents that lost their credential refused", func() bool {
		return logs.count("refused a connection that claims another agent's identity") >= cfg.N
	})
}

func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func equalMaps(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}
