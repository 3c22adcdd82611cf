//go:build supervisor

package stack

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
)

// The OpenTelemetry Collector's OpAMP supervisor, with the configuration of
// examples/supervisor and a collector built from examples/supervisor's
// builder manifest (make supervisor-test builds both from the module
// proxy): it enrolls with the fleet's token and its own key, takes the
// fleet's configuration in a rollout that completes, and after a restart
// of the supervisor comes back as the same agent, let in by its key. A
// connection with the fleet's token alone cannot speak for it.
func TestSupervisor_ExampleConfiguration(t *testing.T) {
	t.Parallel() // its own stack and fleet; it mostly waits on rollouts
	sup, col := os.Getenv("MYRIARCH_SUPERVISOR_BIN"), os.Getenv("MYRIARCH_OTELCOL_BIN")
	if sup == "" || col == "" {
		t.Fatal("MYRIARCH_SUPERVISOR_BIN and MYRIARCH_OTELCOL_BIN name the supervisor and the collector: run make supervisor-test")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s := startTestStack(t, ctx, "supervisor-test-", nil)
	example, err := filepath.Abs("../../examples/supervisor")
	if err != nil {
		t.Fatal(err)
	}
	var k [32]byte
	_, _ = rand.Read(k[:])
	state, logs := t.TempDir(), t.TempDir()
	env := append(os.Environ(), "MYRIARCH_OPAMP_URL="+s.GatewayURL, "MYRIARCH_AGENT_TOKEN="+s.AgentToken,
		"MYRIARCH_AGENT_KEY="+hex.EncodeToString(k[:]), "OTELCOL_BIN="+col, "SUPERVISOR_STATE_DIR="+state,
		"SUPERVISOR_EXAMPLE_DIR="+example, "COLLECTOR_HEALTH_PORT="+strconv.Itoa(freePort(t)))
	run := 0
	start := func() *exec.Cmd {
		run++
		out, err := os.Create(filepath.Join(logs, "supervisor-"+strconv.Itoa(run)+".log"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(sup, "--config", filepath.Join(example, "supervisor.yaml"))
		cmd.Env, cmd.Stdout, cmd.Stderr, cmd.Dir = env, out, out, state
		cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true, Pdeathsig: syscall.SIGKILL}
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); _ = cmd.Wait() })
		return cmd
	}
	defer func() {
		if t.Failed() {
			for i := 1; i <= run; i++ {
				b, _ := os.ReadFile(filepath.Join(logs, "supervisor-"+strconv.Itoa(i)+".log"))
				t.Logf("supervisor run %d:\n%s", i, tail(string(b), 6000))
			}
			b, _ := os.ReadFile(filepath.Join(state, "agent.log"))
			t.Logf("the collector's last log (agent.log):\n%s", tail(string(b), 6000))
		}
	}()
	cmd := start()

	var a agent.Agent
	waitFor(ctx, t, "the supervisor's agent to connect with its key bound", func() bool {
		as, err := s.Deps.Store.AllAgents(ctx)
		if err != nil || len(as) != 1 || !as[0].Online {
			return false
		}
		a = as[0]
		cur, _, _, _, err := s.Deps.Store.AgentCredential(ctx, a.ID)
		return err == nil && cur != ""
	})

	c := client{base: s.APIURL, token: s.AdminToken}
	id := quickstartChange(ctx, t, s, c, "supervisor")
	waitCompleted(ctx, t, c, id, 1)

	// The supervisor restarts (a host reboot, an upgrade): it comes back
	// with the fleet's token and its key, and is let in as itself.
	_ = cmd.Process.Signal(syscall.SIGTERM)
	_ = cmd.Wait()
	waitFor(ctx, t, "the agent to show its connection closed", func() bool {
		got, found, _, err := s.Deps.Store.LoadAgent(ctx, a.ID)
		return err == nil && found && !got.Online
	})
	start()
	waitFor(ctx, t, "the restarted supervisor to be online as the same agent", func() bool {
		got, found, _, err := s.Deps.Store.LoadAgent(ctx, a.ID)
		return err == nil && found && got.Online && got.ConnectedAt.After(a.ConnectedAt)
	})
	if as, _ := s.Deps.Store.AllAgents(ctx); len(as) != 1 {
		t.Fatalf("%d agents after the restart, want the one", len(as))
	}
}

func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
