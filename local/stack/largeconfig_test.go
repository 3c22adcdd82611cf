package stack

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/revision"
	"github.com/myriarch/myriarch/local/simfleet"
)

// TestLargeConfiguration_RolloutCompletes: a collector configuration of
// 1.5 MB is applied, pushed by the gateway, reported back by the agents as
// their effective configuration (a message larger than 1 MiB) and rolled
// out to completion. The store keeps it in chunks; nothing on the way may
// drop it for its size.
func TestLargeConfiguration_RolloutCompletes(t *testing.T) {
	t.Parallel() // its own stack and fleet; it mostly waits on rollouts
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	s := startTestStack(t, ctx, "large-test-", nil)

	const n = 3
	cfg := simfleet.DefaultConfig()
	cfg.N, cfg.Endpoint, cfg.Token, cfg.Speed = n, s.GatewayURL, s.AgentToken, 10
	connectFleet(t, ctx, s, cfg)
	c := client{base: s.APIURL, token: s.AdminToken}
	files, err := revision.ReadDir("../../examples/quickstart")
	if err != nil {
		t.Fatal(err)
	}
	files = withHealthWait(files, "2s")
	files["policies/demo-config.yaml"] = []byte(strings.Replace(string(files["policies/demo-config.yaml"]), "requireApproval: true", "requireApproval: false", 1))
	if err := s.apply(ctx, c, files, "large-1"); err != nil {
		t.Fatal(err)
	}
	files["configs/edge.yaml"] = append(append([]byte(nil), files["configs/edge.yaml"]...), largeComment(1_500_000)...)
	id, err := s.applyForRollout(ctx, c, files, "large-2")
	if err != nil {
		t.Fatal(err)
	}
	waitCompleted(ctx, t, c, id, n)
}

// largeComment is YAML comment lines of about size bytes in all.
func largeComment(size int) []byte {
	var b strings.Builder
	for i := 0; b.Len() < size; i++ {
		fmt.Fprintf(&b, "# padding line %07d %s\n", i, strings.Repeat("x", 100))
	}
	return []byte(b.String())
}
