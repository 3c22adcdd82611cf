package stack

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/storetest"
)

// TestDemo drives the scenario of `make demo` in the test suite, with
// shorter waits: the whole local stack on DynamoDB Local, a simulated fleet
// of real OpAMP agents, a configuration rollout approved through the API,
// and a version rollout through the updater executor.
func TestDemo(t *testing.T) {
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: "demo-test-", StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	var out bytes.Buffer
	sum, err := s.Demo(ctx, DemoOptions{Revision: "../../examples/quickstart", Agents: 10, Speed: 10, HealthWait: "2s", Bake: "1s",
		NewVersion: "0.162.0", Timeout: 3 * time.Minute, Out: &out})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if sum.RolloutsCompleted != 3 || sum.TargetsSucceeded != 30 {
		t.Fatalf("summary %+v, want 3 rollouts and 30 targets (10 agents, three rollouts)\n%s", sum, out.String())
	}
	for _, want := range []string{"waits for approval", "approving it", "through the updater executor", "by region and zone", "stages 5/5", "done: 3 rollouts completed"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out.String())
		}
	}
}
