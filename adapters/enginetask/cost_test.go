package enginetask_test

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
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
		b.ReportMetric(float64(r.evaluations.Load()), "evaluations")
		b.ReportMetric(float64(events), "history-events")
		b.ReportMetric(ro.FinishedAt.Sub(*ro.StartedAt).Minutes(), "rollout-minutes")
		b.ReportMetric(wall.Seconds(), "wall-s")
	}
}

// BenchmarkStateMachine_SlowStartingCollector is one version target whose
// collector reports StatusStarting for 20 minutes after its 60 s health wait
// would have ended (applyTimeout 30m), then StatusOK: the evaluations it
// costs. A deadline in the past once made this a loop of hundreds of
// evaluations a second; now the engine sleeps until applyTimeout or the
// agent's next report.
func BenchmarkStateMachine_SlowStartingCollector(b *testing.B) {
	for i := 0; i < b.N; i++ {
		evaluations, transitions := slowStartingCollector(b)
		b.ReportMetric(float64(evaluations), "evaluations")
		b.ReportMetric(float64(transitions), "transitions")
	}
}

// TestStateMachine_SlowStartingCollector_FewEvaluations: the 21 minutes of
// a collector that is still starting cost a few dozen evaluations (about one
// a minute, the state machine's longest wait), not a loop. 24 are measured;
// the loop this guards against made thousands.
func TestStateMachine_SlowStartingCollector_FewEvaluations(t *testing.T) {
	if evaluations, _ := slowStartingCollector(t); evaluations > 40 {
		t.Fatalf("%d evaluations for one collector starting for 21 minutes, want at most 40", evaluations)
	}
}

func slowStartingCollector(tb testing.TB) (evaluations, transitions int) {
	r := newRig(tb)
	ids := r.agents(1, nil)
	r.behaviour[ids[0]] = "starting"
	r.start("r-slow", policy.KindVersion, policy.Spec{HealthWait: time.Minute, ApplyTimeout: 30 * time.Minute}, ids, nil)
	healthyAt := r.clk.Now().Add(21 * time.Minute)
	r.run(func() bool { return !r.clk.Now().Before(healthyAt) })
	a, err := r.st.AgentsByID(r.ctx, ids)
	if err != nil {
		tb.Fatal(err)
	}
	ag := a[ids[0]]
	ag.Health = agent.Health{Healthy: true, Status: agent.StatusOK, ReportedAt: r.clk.Now()}
	if err := r.st.RecordAgent(r.ctx, ag); err != nil {
		tb.Fatal(err)
	}
	r.mu.Lock()
	r.behaviour[ids[0]] = ""
	r.mu.Unlock()
	r.run(nil)
	r.wantStatus("r-slow", rollout.Completed)
	states, _ := r.history("r-slow")
	return int(r.evaluations.Load()), len(states)
}

// Only the evaluations read a rollout's targets: the prepare, continue and
// finish tasks, and the record of a gate's reading, read the rollout item
// alone. Each of them used to read every target too (380 KB a task at
// 1,000 targets).
func TestStateMachine_OnlyEvaluationsReadTheTargets(t *testing.T) {
	r := newRig(t)
	ids := r.agents(20, nil)
	r.st.ResetUsage()
	r.start("r-reads", policy.KindConfig, policy.Spec{HealthWait: time.Minute}, ids, nil)
	r.run(nil)
	queries := r.st.UsageByKind()["Query targets"].Requests
	r.wantStatus("r-reads", rollout.Completed)
	if evaluations := r.evaluations.Load(); evaluations == 0 || queries != evaluations {
		t.Errorf("%d queries of the targets in %d evaluations, want one each (20 targets are one page)", queries, evaluations)
	}
}
