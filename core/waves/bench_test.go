package waves

import (
	"fmt"
	"testing"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/selector"
)

// BenchmarkAssign100k: 100,000 agents, a canary selector wave matching 1 %
// of them, then percent waves 10, 50 and 100.
func BenchmarkAssign100k(b *testing.B) {
	cs := make([]Candidate, 100_000)
	for i := range cs {
		attrs := selector.Map{"host.name": fmt.Sprintf("host-%d", i), "site.timezone": "Europe/Berlin"}
		if i%100 == 0 {
			attrs[canaryLabel] = "canary"
		}
		cs[i] = Candidate{AgentID: fmt.Sprintf("01J%023d", i), Attributes: attrs}
	}
	ws := []policy.Wave{sel("canary", "canary"), pct("p10", 10), pct("p50", 50), pct("all", 100)}
	b.ReportAllocs()
	for b.Loop() {
		plan := Assign("01JROLLOUT0000000000000000", ws, cs)
		if len(plan.Members[0]) != 1000 {
			b.Fatalf("canary wave has %d", len(plan.Members[0]))
		}
	}
}
