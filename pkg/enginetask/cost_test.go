package enginetask_test

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// BenchmarkStateMachine_1000Agents3Waves runs one configuration rollout of
// 1,000 agents in three waves (10 %, 50 %, 100 %; healthWait 60s,
// maxConcurrent 50) on the fake clock and reports what sets the AWS bill:
// state transitions (states entered) and Lambda invocations, plus the
// history length of the execution and the fake rollout duration.
func BenchmarkStateMachine_1000Agents3Waves(b *testing.B) {
	for i := 0; i < b.N; i++ {
		r := newRig(b)
		ids := r.agents(1000, nil)
		fifty := 50
		spec := policy.Spec{Waves: []policy.Wave{{Name: "w10", Percent: 10}, {Name: "w50", Percent: 50}, {Name: "rest", Percent: 100}},
			MaxConcurrent: &fifty, HealthWait: time.Minute}
		start := time.Now()
		r.start("r-cost", policy.KindConfig, spec, ids, nil)
		r.run(nil)
		wall := time.Since(start)
		ro := r.wantStatus("r-cost", rollout.Completed)
		states, events := r.history("r-cost")
		b.ReportMetric(float64(len(states)), "transitions")
		b.ReportMetric(float64(r.invocations.Load()), "invocations")
		b.ReportMetric(float64(events), "history-events")
		b.ReportMetric(ro.FinishedAt.Sub(*ro.StartedAt).Minutes(), "rollout-minutes")
		b.ReportMetric(wall.Seconds(), "wall-s")
	}
}
