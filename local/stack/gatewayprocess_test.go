package stack

import (
	"context"
	"io"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// buildGateway builds the opamp-gateway binary for the test.
func buildGateway(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "opamp-gateway")
	out, err := exec.Command("go", "build", "-o", bin, "github.com/myriarch/myriarch/opamp-gateway").CombinedOutput()
	if err != nil {
		t.Fatalf("build opamp-gateway: %v\n%s", err, out)
	}
	return bin
}

// TestGatewayProcess_KilledAndStartedAgain_AgentsReconnect: the stack runs
// the real gateway binary as a process of its own; killed with SIGKILL, its
// agents lose their connection; started again on the same address, they
// reconnect and are online, each with a new connection.
func TestGatewayProcess_KilledAndStartedAgain_AgentsReconnect(t *testing.T) {
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	t.Parallel()        // its own stack and fleet; it mostly waits on rollouts
	bin := buildGateway(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: "gwproc-test-", StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now,
		GatewayBinary: bin, GatewayStderr: io.Discard})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	if s.Gateway == nil || s.Gateway.PID() == 0 {
		t.Fatal("no gateway process")
	}

	const n = 3
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = n, s.GatewayURL, s.AgentToken, 10
	fleet := connectFleet(t, ctx, s, cfg)
	connected := func(want bool) func([]simfleet.AgentState) bool {
		return func(as []simfleet.AgentState) bool {
			for _, a := range as {
				if a.Connected != want {
					return false
				}
			}
			return true
		}
	}
	if err := fleet.Wait(ctx, connected(true)); err != nil {
		t.Fatal(err)
	}
	killedAt := time.Now().UTC()
	if err := s.Gateway.Kill(); err != nil {
		t.Fatal(err)
	}
	if s.Gateway.PID() != 0 {
		t.Fatal("the gateway process runs after SIGKILL")
	}
	if err := fleet.Wait(ctx, connected(false)); err != nil {
		t.Fatalf("the agents never noticed the gateway die: %v", err)
	}
	if err := s.Gateway.Start(ctx); err != nil {
		t.Fatal(err)
	}
	if err := fleet.Wait(ctx, connected(true)); err != nil {
		t.Fatalf("the agents did not reconnect: %v", err)
	}
	waitFor(ctx, t, "every agent online on a new connection", func() bool {
		as, err := s.Deps.Store.AllAgents(ctx)
		if err != nil || len(as) != n {
			return false
		}
		for _, a := range as {
			if !a.Online || !a.ConnectedAt.After(killedAt) {
				return false
			}
		}
		return true
	})
}
