package predict

import (
	"testing"
	"time"
)

// benchSpec is a canary of 1 %, then 10 %, then the rest, 50 at a time,
// in a nightly window of each agent's zone.
const benchSpec = `  waves:
    - {name: canary, percent: 1}
    - {name: early, percent: 10}
    - {name: rest, percent: 100}
  maxConcurrent: 50
  healthWait: 60s
  maintenanceWindows: [{start: "22:00", end: "05:00"}]
`

// BenchmarkPlanned_10k plans and simulates a configuration rollout of
// 10,000 agents in four time zones: the planner's decision, then the run
// with the median apply time and the pessimistic one (200 rounds of 50
// each, about 400 passes over the targets of the current wave).
func BenchmarkPlanned_10k(b *testing.B) {
	zones := []string{"Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"}
	as := edgeAgents(10_000, func(i int) map[string]string { return map[string]string{"site.timezone": zones[i%len(zones)]} })
	apply := ApplyTime{Median: 20 * time.Second, P90: 45 * time.Second, Source: SourceHistory, Samples: 100}
	b.ReportAllocs()
	for b.Loop() {
		p := planOf(b, benchSpec, as, apply)
		if p.Prediction == nil || !p.Prediction.Complete {
			b.Fatalf("incomplete: %+v", p.Prediction)
		}
	}
}
