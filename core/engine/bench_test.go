package engine

import (
	"fmt"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/windows"
)

// benchInput is a wave of n targets: half verifying in their health wait,
// a quarter in progress, a quarter pending outside a maintenance window in
// the agents' own zones.
func benchInput(n int) Input {
	s := snap(policy.KindConfig, func(s *policy.Spec) {
		s.MaxConcurrent = intp(0)
		s.MaintenanceWindows = []windows.Window{{Start: 22 * 60, End: 5 * 60}}
	})
	in := Input{Now: t0, Agents: make(map[string]agent.Agent, n)}
	started, verified := t0.Add(-time.Minute), t0.Add(-30*time.Second)
	in.Rollout = rollout.Rollout{ID: "r1", Fleet: "edge", Kind: policy.KindConfig, Status: rollout.Running, Policy: s,
		Waves: []rollout.Wave{{Name: "all", Status: rollout.WaveRunning, StartedAt: &started}}}
	zones := []string{"Europe/Berlin", "America/New_York", "Asia/Tokyo", "UTC"}
	for i := 0; i < n; i++ {
		id := fmt.Sprintf("agent-%05d", i)
		t := rollout.Target{RolloutID: "r1", AgentID: id, Status: rollout.TargetPending, Attempt: 1, FromRef: "h-old", ToRef: "h-new"}
		a := agent.Agent{ID: id, Fleet: "edge", Online: true, Attributes: map[string]string{"site.timezone": zones[i%len(zones)]},
			Health: agent.Health{Healthy: true, ReportedAt: started}, RemoteConfig: agent.RemoteConfigStatus{Hash: "h-old", Status: agent.ConfigApplied}}
		switch i % 4 {
		case 0, 1:
			t.Status, t.StartedAt, t.VerifiedAt, t.ReportedAt = rollout.TargetVerifying, &started, &verified, &verified
			a.RemoteConfig = agent.RemoteConfigStatus{Hash: "h-new", Status: agent.ConfigApplied, Since: verified}
		case 2:
			t.Status, t.StartedAt = rollout.TargetInProgress, &started
		}
		in.Targets = append(in.Targets, t)
		in.Agents[id] = a
	}
	return in
}

// BenchmarkEvaluate_Wave10k is one evaluation pass over a wave of 10,000 targets.
func BenchmarkEvaluate_Wave10k(b *testing.B) {
	in := benchInput(10000)
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		res := Evaluate(in)
		if res.NextDeadline.IsZero() {
			b.Fatal("expected a deadline")
		}
	}
}
