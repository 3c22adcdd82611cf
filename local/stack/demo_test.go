package stack

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/gate/gatetest"
	"github.com/myriarch/myriarch/local/storetest"
)

// TestDemo drives the scenario of `make demo` in the test suite, with
// shorter waits: the whole local stack on DynamoDB Local, a simulated fleet
// of real OpAMP agents, a configuration rollout approved through the API,
// a version rollout through the updater executor, a rollout by region and
// zone whose gates read the fleet's metrics in a real Prometheus, and one
// whose gate turns red in one zone.
func TestDemo(t *testing.T) {
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	t.Parallel()        // the other end-to-end tests have stacks of their own
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	metrics := metricsListener(t)
	prom := gatetest.StartPrometheus(t, []string{metrics.Addr().String()}, time.Second)
	s, err := Start(ctx, Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: "demo-test-", StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now, PrometheusURL: prom})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	var out bytes.Buffer
	sum, err := s.Demo(ctx, DemoOptions{Revision: "../../examples/quickstart", Agents: 10, Speed: 10, HealthWait: "2s", Bake: "1s",
		NewVersion: "0.162.0", MetricsListener: metrics, Timeout: 3 * time.Minute, Out: &out})
	if err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	if sum.RolloutsCompleted != 3 || sum.TargetsSucceeded != 30 || sum.RolloutsRolledBack != 1 {
		t.Fatalf("summary %+v, want 3 rollouts and 30 targets (10 agents, three rollouts), then one rolled back\n%s", sum, out.String())
	}
	if sum.FirstCompleted <= 0 || sum.FirstCompleted >= sum.Wall {
		t.Errorf("first rollout completed at %s of %s: want a moment within the demo", sum.FirstCompleted, sum.Wall)
	}
	for _, want := range []string{"the demo's waits: health wait 2s a wave", "waits for approval", "the operator approves it", "through the updater executor", "by region and zone", "stages 5/5",
		"every stage's gate stayed green", "gate red: metric export-failures (rest/us-east-1/us-east-1b)", "rolled_back", "  health wait: "} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("the demo's output lacks %q:\n%s", want, out.String())
		}
	}
	if strings.Contains(out.String(), "rollouts completed") {
		t.Errorf("the summary is the command's to print, once:\n%s", out.String())
	}
}
