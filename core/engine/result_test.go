package engine

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// An evaluation that changes only the rollout item says so: here the last
// target of batch 0 succeeded in an agent event's evaluation (which stores
// the target alone), and the next evaluation of the whole rollout only
// begins the batch gate of batch 0. No target changed, nothing was ordered
// or emitted, no status moved; without RolloutChanged the adapter would not
// store the gate, and every evaluation would begin it again.
func TestResult_RolloutChanged_ByABatchGateAlone(t *testing.T) {
	f := gatedFixture(t, func(s *policy.Spec) {
		s.Health = nil
		s.Waves[1].BatchBake = time.Minute
		s.Waves[1].BatchGate = true
	})
	f.tick()
	f.settle()
	f.toNext() // the canary's bake ends: zones/r1a starts its batch 0
	batch0 := f.inFlightIDs()
	if len(batch0) != 1 {
		t.Fatalf("in flight %v, want batch 0 of zones/r1a", batch0)
	}
	f.apply(batch0[0])
	f.tick() // verifying
	f.advance(time.Minute)
	res, ok := EvaluateTargets(Input{Rollout: f.r, Targets: []rollout.Target{f.target(batch0[0])}, Agents: f.agents, Now: f.now})
	if !ok || res.RolloutChanged {
		t.Fatalf("ok %v, rollout changed %v: the success is decided alone and changes no rollout", ok, res.RolloutChanged)
	}
	f.store(res)
	before := f.r.Stages[1].Passes[0].Gate
	got := f.tick()
	if got.Changes() || got.Rollout.Status != rollout.Running || got.Rollout.Stages[1].Status != rollout.StageRunning {
		t.Fatalf("changed %v, orders %v, events %v: want only the batch gate to begin", got.Changed, got.Orders, got.Events)
	}
	if before != nil || got.Rollout.Stages[1].Passes[0].Gate == nil {
		t.Fatalf("batch gate %v before, %v after: want it begun now", before, got.Rollout.Stages[1].Passes[0].Gate)
	}
	if !got.RolloutChanged {
		t.Fatal("RolloutChanged is false: the begun batch gate would not be stored")
	}
	if again := f.tick(); again.RolloutChanged || again.Changes() {
		t.Fatalf("a second evaluation at the same moment changed the rollout (%v) or targets (%v)", again.RolloutChanged, again.Changed)
	}
}
