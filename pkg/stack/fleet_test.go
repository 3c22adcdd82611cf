package stack

import (
	"context"
	"testing"

	"github.com/myriarch/myriarch/pkg/simfleet"
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
