package planner

import (
	"fmt"
	"testing"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/selector"
)

// BenchmarkDecide_100kAgents_1kTargeted is one planner run for a fleet of
// 100,000 agents of which 1,000 already have a target in the active rollout:
// the other 99,000 join its last wave as stragglers.
func BenchmarkDecide_100kAgents_1kTargeted(b *testing.B) {
	as := make([]agent.Agent, 100000)
	for i := range as {
		as[i] = agent.Agent{ID: fmt.Sprintf("agent-%06d", i), Fleet: "edge", Online: true, DesiredHash: "h1",
			Attributes: map[string]string{"labels.wave": "rest"}}
	}
	in := input(policy.KindConfig, as)
	act := active(policy.KindConfig, rollout.Running, "h2")
	for i := 0; i < 1000; i++ {
		act.Targets = append(act.Targets, rollout.Target{RolloutID: "r-old", AgentID: as[i].ID, Status: rollout.TargetInProgress, ToRef: "h2"})
	}
	in.Active = act
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d := Decide(in)
		if len(d.Stragglers) != 99000 {
			b.Fatalf("%d stragglers", len(d.Stragglers))
		}
	}
}

// BenchmarkDecide_100kAgents_Create is a planner run that creates a rollout
// of 100,000 targets over three waves.
func BenchmarkDecide_100kAgents_Create(b *testing.B) {
	as := make([]agent.Agent, 100000)
	for i := range as {
		as[i] = agent.Agent{ID: fmt.Sprintf("agent-%06d", i), Fleet: "edge", Online: true, DesiredHash: "h1"}
	}
	in := input(policy.KindConfig, as)
	in.Policies["cfg"] = policy.Policy{Name: "cfg", Spec: policy.Spec{Waves: []policy.Wave{
		{Name: "canary", Selector: &selector.Selector{MatchAttributes: map[string]string{"labels.wave": "canary"}}},
		{Name: "early", Percent: 10}, {Name: "rest", Percent: 100}}}}
	b.ReportAllocs()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if d := Decide(in); d.Created == nil || len(d.Created.Targets) != 100000 {
			b.Fatal("expected a rollout of 100000 targets")
		}
	}
}
