package stack

import (
	"context"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/simfleet"
	"github.com/myriarch/myriarch/local/storetest"
)

// connectFleet starts the simulated fleet of cfg, stops it when the test
// ends, and waits until the store has recorded all its agents.
func connectFleet(t *testing.T, ctx context.Context, s *Stack, cfg simfleet.Config) *simfleet.Fleet {
	t.Helper()
	fleet, err := simfleet.Start(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = fleet.Stop() })
	if err := s.waitAgents(ctx, cfg.N); err != nil {
		t.Fatal(err)
	}
	return fleet
}

// startTestStack starts a stack on free ports with the tables under prefix,
// stopped when the test ends; change adjusts the options first.
func startTestStack(t *testing.T, ctx context.Context, prefix string, change func(*Options)) *Stack {
	t.Helper()
	storetest.Client(t) // fails, not skips, without DynamoDB Local
	o := Options{APIAddr: "127.0.0.1:0", GatewayAddr: "127.0.0.1:0", SFNAddr: "127.0.0.1:0",
		TablePrefix: prefix, StateMachineFile: "../../statemachines/rollout.asl.json", Clock: time.Now,
		WSPing: time.Second} // pings among the rollouts' messages, not once a minute
	if change != nil {
		change(&o)
	}
	s, err := Start(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(s.Stop)
	return s
}
