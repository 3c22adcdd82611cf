package enginetask

import (
	"reflect"
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/route"
)

var now = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func passed(st rollout.Status, deadline time.Time, statuses ...rollout.TargetStatus) Evaluated {
	p := Evaluated{Result: engine.Result{Rollout: rollout.Rollout{ID: "r1", Status: st, StatusReason: "why",
		Waves: []rollout.Wave{{Name: "canary", Status: rollout.WaveCompleted}, {Name: "rest", Status: rollout.WaveRunning}}},
		NextDeadline: deadline}}
	for _, s := range statuses {
		p.Targets = append(p.Targets, rollout.Target{Status: s})
	}
	return p
}

// Verdict formats route.Decide for the state machine: the choice's string,
// a Wait's end in RFC 3339 UTC, a park's timeout, and what the console
// shows (status, reason, wave, stage, iteration). The routes themselves are
// route's tests.
func TestVerdict_Output(t *testing.T) {
	soon := now.Add(20*time.Second + 400*time.Millisecond)
	cases := []struct {
		name string
		in   Evaluated
		want Output
	}{
		{name: "a Wait's end, rounded up, in UTC", in: passed(rollout.Running, soon.In(time.FixedZone("CET", 3600)), rollout.TargetVerifying),
			want: Output{RolloutID: "r1", Iteration: 3, Verdict: "wait_health", Status: "running", Reason: "why", Wave: "rest", WaitUntil: "2026-03-02T12:00:21Z"}},
		{name: "a park's timeout", in: passed(rollout.WaitingApproval, now.Add(90*time.Second), rollout.TargetPending),
			want: Output{RolloutID: "r1", Iteration: 3, Verdict: "waiting_approval", Status: "waiting_approval", Reason: "why", Wave: "rest", TimeoutSeconds: 90}},
		{name: "done shows the wave too", in: passed(rollout.Completed, time.Time{}),
			want: Output{RolloutID: "r1", Iteration: 3, Verdict: "done", Status: "completed", Reason: "why", Wave: "rest"}},
	}
	for _, c := range cases {
		if got := Verdict(c.in, 3, 0, now); !reflect.DeepEqual(got, c.want) {
			t.Errorf("%s:\n got %+v\nwant %+v", c.name, got, c.want)
		}
	}
	// A stage baking with nothing in flight: the console shows Baking and the stage.
	bake := passed(rollout.Running, now.Add(3*time.Hour), rollout.TargetSucceeded, rollout.TargetPending)
	bake.Rollout.Stages = []rollout.Stage{{Name: "rest/eu-1a", Status: rollout.StageBaking}, {Name: "rest/eu-1b", Status: rollout.StagePending}}
	if out := Verdict(bake, 1, 0, now); out.Verdict != string(route.WaitBake) || out.Stage != "rest/eu-1a" {
		t.Errorf("baking: verdict %s stage %q, want %s and rest/eu-1a", out.Verdict, out.Stage, route.WaitBake)
	}
}
