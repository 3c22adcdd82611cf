package predict

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/rollout"
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

// BenchmarkLive_10kHalfway predicts a running rollout of 10,000 targets
// from its live state, halfway through its last wave: the rest is
// simulated, the completed waves are left out.
func BenchmarkLive_10kHalfway(b *testing.B) {
	zones := []string{"Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"}
	as := edgeAgents(10_000, func(i int) map[string]string { return map[string]string{"site.timezone": zones[i%len(zones)]} })
	apply := ApplyTime{Median: 20 * time.Second, P90: 45 * time.Second, Source: SourceHistory, Samples: 100}
	// run the rollout to the middle of its last wave, then predict from there
	d := plannerDecision(b, benchSpec, as)
	agents := map[string]agent.Agent{}
	for _, a := range as {
		agents[a.ID] = a
	}
	s := newRun(d.Created.Rollout, d.Created.Targets, agents, t0, "", apply.Median)
	for s.out.steps = 0; s.r.Waves[2].Status != rollout.WaveRunning || started(s.ts) < 5000; s.out.steps++ {
		s.deliver()
		res := s.pass()
		if s.r.Status == rollout.WaitingApproval {
			s.approve()
		}
		s.clock.now = s.next(s.sleep(res))
	}
	live := LiveInput{Rollout: s.r, Targets: s.ts, Agents: s.agents, Now: s.clock.now, Apply: apply}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		if p := Live(live); p == nil || !p.Complete {
			b.Fatalf("incomplete: %+v", p)
		}
	}
}

// started counts the targets that started.
func started(ts []rollout.Target) int {
	n := 0
	for _, t := range ts {
		if t.StartedAt != nil {
			n++
		}
	}
	return n
}
