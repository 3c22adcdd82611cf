package topology

import (
	"fmt"
	"testing"

	"github.com/myriarch/myriarch/core/selector"
	"github.com/myriarch/myriarch/core/waves"
)

// BenchmarkCompute100k: 100,000 agents in 3 regions × 3 zones, a canary, one
// region by zone and the other two together, batches of 25%.
func BenchmarkCompute100k(b *testing.B) {
	s := snapshot(b, `regions: [eu-1, eu-2, us-1]
maxUnavailable: 25%
waves:
  - {name: canary, selector: "labels.canary=true", maxUnavailable: 1}
  - {name: eu-1, selector: "cloud.region=eu-1, labels.canary!=true", by: zone}
  - {name: rest, percent: 100, by: zone, parallelRegions: 2}`)
	const n = 100_000
	cands := make([]waves.Candidate, n)
	for i := range cands {
		region := []string{"eu-1", "eu-2", "us-1"}[i%3]
		attrs := selector.Map{"cloud.region": region, "cloud.availability_zone": region + string(rune('a'+i/3%3))}
		if i < 10 {
			attrs["labels.canary"] = "true"
		}
		cands[i] = waves.Candidate{AgentID: fmt.Sprintf("agent-%06d", i), Attributes: attrs}
	}
	targets := assign("r1", s, cands)
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if _, _, err := Compute("r1", s, targets); err != nil {
			b.Fatal(err)
		}
	}
}
