package main

import (
	"strings"
	"testing"
	"time"

	"github.com/myriarch/myriarch/adapters/api/schema"
	"github.com/myriarch/myriarch/adapters/client"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// watch shows the stages of a rollout whose waves split by zone: the
// progress, the batches done, the countdown of a bake and the pass and
// batch a running stage works on.
func TestWriteStages_ProgressBatchesAndBakeCountdown(t *testing.T) {
	now := time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)
	bake := now.Add(7*time.Minute + 30*time.Second)
	one, two := 1, 2
	r := client.Rollout{ID: "r-1", Progress: "1/3", Stages: []schema.Stage{
		{Name: "canary", Status: rollout.StagePassed, Passes: []schema.StagePass{{Name: "canary", Targets: 1, BatchSize: 1, Batches: 1, BatchesDone: &one}}},
		{Name: "rest/eu-1a", Status: rollout.StageBaking, BakeUntil: &bake, Passes: []schema.StagePass{{Name: "rest/eu-1/eu-1a", Targets: 4, BatchSize: 2, Batches: 2, BatchesDone: &two}}},
		{Name: "rest/eu-1b", Status: rollout.StagePending, Passes: []schema.StagePass{{Name: "rest/eu-1/eu-1b", Targets: 4, BatchSize: 2, Batches: 2}}},
	}}
	var b strings.Builder
	view{r: r, now: now}.writeStages(&b)
	out := b.String()
	for _, want := range []string{"Stages 1/3", "rest/eu-1a", "baking", "batches 2/2", "bake ends in 7m30s", "rest/eu-1b", "batches 0/2"} {
		if !strings.Contains(out, want) {
			t.Errorf("stages lack %q:\n%s", want, out)
		}
	}
	if strings.Contains(out, "now:") {
		t.Errorf("no stage runs, yet a current batch is shown:\n%s", out)
	}

	// rest/eu-2a+us-1a runs two passes side by side: eu-2a on its second
	// batch, us-1a on its first; eu-1b's pass is done, so it has none.
	r.Progress = "2/4"
	r.Stages[1].Status, r.Stages[2].Status, r.Stages[2].Passes[0].BatchesDone = rollout.StagePassed, rollout.StagePassed, &two
	r.Stages = append(r.Stages, schema.Stage{Name: "rest/eu-2a+us-1a", Status: rollout.StageRunning, Passes: []schema.StagePass{
		{Name: "rest/eu-2/eu-2a", Targets: 4, BatchSize: 2, Batches: 2, BatchesDone: &one},
		{Name: "rest/us-1/us-1a", Targets: 2, BatchSize: 1, Batches: 2},
	}})
	b.Reset()
	view{r: r, now: now}.writeStages(&b)
	want := "  rest/eu-2a+us-1a  running  2 pass(es), batches 1/4\n    now: rest/eu-2/eu-2a#1, rest/us-1/us-1a#0\n"
	if got := b.String(); !strings.Contains(got, want) || strings.Count(got, "now:") != 1 {
		t.Errorf("stages\n%s\nwant the running stage with its current batches\n%s", got, want)
	}
}

// Below each stage: the freeze that holds a frozen one, the batch gate of
// a running one that has not passed yet, the gate of a failed one with its
// last red result; a stage whose gate begins has no reading yet.
func TestWriteStages_HeldBatchGateAndLastRed(t *testing.T) {
	now := time.Date(2026, 12, 21, 10, 0, 0, 0, time.UTC)
	due, later := now.Add(-time.Second), now.Add(20*time.Second)
	one, two := 1, 2
	r := client.Rollout{ID: "r-1", Progress: "0/4", Policy: client.PolicySnapshot{Health: &policy.Health{FailuresToStop: 1}}, Stages: []schema.Stage{
		{Name: "zones/eu-1a", Status: rollout.StageFailed, LastRed: "probe http://{host}:13133/ (h1): status 503, want 200",
			Gate: &schema.GateState{Readings: 3, ConsecutiveRed: 1, NextAt: &later}},
		{Name: "zones/eu-1b", Status: rollout.StageRunning, Passes: []schema.StagePass{
			{Name: "zones/eu-1/eu-1b", Batches: 3, BatchesDone: &two, Cleared: 1, Gate: &schema.BatchGate{Batch: 1, GateState: schema.GateState{Readings: 1, NextAt: &due}}},
			{Name: "zones/eu-1/eu-1c", Batches: 3, BatchesDone: &one, Cleared: 1, Gate: &schema.BatchGate{Batch: 0, GateState: schema.GateState{Readings: 2}}}, // passed
		}},
		{Name: "zones/us-1a", Status: rollout.StageBaking, Gate: &schema.GateState{NextAt: &later}},
		{Name: "zones/us-1b", Status: rollout.StageFrozen, Held: `freeze "holidays" (us-1) until 2027-01-04T00:00:00Z`},
	}}
	var b strings.Builder
	view{r: r, now: now}.writeStages(&b)
	want := `Stages 0/4
  zones/eu-1a  failed   0 pass(es), batches 0/0
    gate: 3 readings, 1 red in a row (stops at 1)
    last red: probe http://{host}:13133/ (h1): status 503, want 200
    its targets: myrctl rollouts targets r-1 --stage zones/eu-1a
  zones/eu-1b  running  2 pass(es), batches 3/6
    now: zones/eu-1/eu-1b#1 (batch gate), zones/eu-1/eu-1c#1
    batch gate zones/eu-1/eu-1b#1: 1 reading, last green · next reading due
  zones/us-1a  baking   0 pass(es), batches 0/0
    gate: no reading yet · next reading in 20s
  zones/us-1b  frozen   0 pass(es), batches 0/0
    held: freeze "holidays" (us-1) until 2027-01-04T00:00:00Z
  stage zones/us-1b is frozen; to bypass every freeze: myrctl rollouts resume r-1 --freeze-override --reason "…"
`
	if got := b.String(); got != want {
		t.Errorf("stages\n%s\nwant\n%s", got, want)
	}
}
