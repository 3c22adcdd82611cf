package rollout

import (
	"testing"
	"time"
)

// EndPasses gives every pass of a stage that was running or baking an
// outcome (failed with a failed target, else cancelled), and none to the
// passes of stages that never began or had finished.
func TestEndPasses(t *testing.T) {
	r := Rollout{Stages: []Stage{
		{Name: "done", Status: StagePassed, Passes: []Pass{{Name: "p0", Outcome: StagePassed}}},
		{Name: "running", Status: StageRunning, Passes: []Pass{{Name: "p1"}, {Name: "p2"}}},
		{Name: "baking", Status: StageBaking, Passes: []Pass{{Name: "p3"}}},
		{Name: "later", Status: StagePending, Passes: []Pass{{Name: "p4"}}},
	}}
	orig := r
	ts := []Target{
		{AgentID: "a", Stage: 1, Pass: 1, Status: TargetFailed},
		{AgentID: "b", Stage: 1, Pass: 0, Status: TargetCancelled},
		{AgentID: "c", Stage: 2, Pass: 0, Status: TargetSucceeded},
	}
	r.EndPasses(ts, time.Time{})
	want := []StageStatus{StagePassed, PassCancelled, StageFailed, PassCancelled, ""}
	got := []StageStatus{r.Stages[0].Passes[0].Outcome, r.Stages[1].Passes[0].Outcome, r.Stages[1].Passes[1].Outcome,
		r.Stages[2].Passes[0].Outcome, r.Stages[3].Passes[0].Outcome}
	for i := range want {
		if got[i] != want[i] {
			t.Fatalf("outcomes %v, want %v", got, want)
		}
	}
	if orig.Stages[1].Passes[0].Outcome != "" {
		t.Fatal("EndPasses changed the caller's copy of the stages")
	}
}
