package route

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/rollout"
)

var now = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

// evaluated is an evaluation of a running rollout's second wave with the
// targets in the statuses given.
func evaluated(st rollout.Status, deadline time.Time, statuses ...rollout.TargetStatus) Input {
	in := Input{Rollout: rollout.Rollout{ID: "r1", Status: st,
		Waves: []rollout.Wave{{Name: "canary", Status: rollout.WaveCompleted}, {Name: "rest", Status: rollout.WaveRunning}}},
		NextDeadline: deadline, Iteration: 1}
	for _, s := range statuses {
		in.Targets = append(in.Targets, rollout.Target{Status: s})
	}
	return in
}

func TestDecide(t *testing.T) {
	soon, later := now.Add(20*time.Second), now.Add(3*time.Hour)
	iteration := func(in Input, n int) Input { in.Iteration = n; return in }
	healthWait := func(in Input, d time.Duration) Input { in.Rollout.Policy.HealthWait = d; return in }
	gatesDue := func(in Input) Input { in.GatesDue = true; return in }
	baking := func(in Input) Input {
		in.Rollout.Stages = []rollout.Stage{{Name: "rest/eu-1a", Status: rollout.StageBaking}, {Name: "rest/eu-1b", Status: rollout.StagePending}}
		return in
	}
	cases := []struct {
		name  string
		in    Input
		want  Verdict
		until time.Time // zero: no Wait
	}{
		{name: "completed", in: evaluated(rollout.Completed, time.Time{}), want: Done},
		{name: "superseded", in: evaluated(rollout.Superseded, time.Time{}), want: Done},
		{name: "failed parks", in: evaluated(rollout.Failed, soon, rollout.TargetVerifying), want: Failed},
		{name: "gates due: read before anything else", in: gatesDue(evaluated(rollout.Running, soon, rollout.TargetVerifying)), want: ReadGates},
		{name: "health wait ends soon", in: evaluated(rollout.Running, soon, rollout.TargetVerifying), want: WaitHealth, until: soon},
		{name: "applying: capped short, a health wait may begin any moment", in: evaluated(rollout.Running, later, rollout.TargetInProgress), want: WaitApply, until: now.Add(ApplyCap)},
		{name: "verifying and applying: capped at a minute", in: evaluated(rollout.Running, later, rollout.TargetInProgress, rollout.TargetVerifying), want: WaitHealth, until: now.Add(LostEventCap)},
		{name: "window hours away: sleeps until it opens", in: evaluated(rollout.Running, later, rollout.TargetWaitingWindow), want: WaitWindow, until: later},
		{name: "window days away: capped", in: evaluated(rollout.Running, now.Add(72*time.Hour), rollout.TargetWaitingWindow), want: WaitWindow, until: now.Add(IdleCap)},
		{name: "offline agents", in: evaluated(rollout.Running, soon, rollout.TargetPending), want: WaitOffline, until: soon},
		{name: "rolling back", in: evaluated(rollout.RollingBack, later, rollout.TargetSucceeded), want: WaitRollback, until: now.Add(LostEventCap)},
		{name: "approval with nothing in flight parks", in: evaluated(rollout.WaitingApproval, time.Time{}, rollout.TargetPending), want: Approval},
		{name: "approval with a health wait running keeps waiting", in: evaluated(rollout.WaitingApproval, soon, rollout.TargetVerifying), want: WaitHealth, until: soon},
		{name: "frozen with nothing in flight parks", in: evaluated(rollout.Frozen, later, rollout.TargetPending), want: Frozen},
		{name: "paused with nothing in flight parks", in: evaluated(rollout.Paused, time.Time{}, rollout.TargetSucceeded), want: Paused},
		{name: "paused keeps evaluating health waits", in: evaluated(rollout.Paused, soon, rollout.TargetVerifying), want: WaitHealth, until: soon},
		{name: "long history continues", in: iteration(evaluated(rollout.Running, soon, rollout.TargetVerifying), MaxIterations), want: Continue, until: soon},
		{name: "one evaluation before the limit", in: iteration(evaluated(rollout.Running, soon, rollout.TargetVerifying), MaxIterations-1), want: WaitHealth, until: soon},
		{name: "deadline in the past: no wait", in: evaluated(rollout.Running, now.Add(-time.Second), rollout.TargetVerifying), want: WaitHealth, until: now},
		// Step Functions truncates a Wait's timestamp to whole seconds: a
		// deadline 400ms past a second is asked as the next second, so the
		// execution never wakes before it (and evaluates again in a loop).
		{name: "deadline with a fraction of a second: rounded up", in: evaluated(rollout.Running, soon.Add(400*time.Millisecond), rollout.TargetVerifying), want: WaitHealth, until: soon.Add(time.Second)},
		{name: "applying, health wait shorter than the cap: waits the health wait", in: healthWait(evaluated(rollout.Running, later, rollout.TargetInProgress), 3*time.Second), want: WaitApply, until: now.Add(3 * time.Second)},
		{name: "applying, health wait longer than the cap: capped", in: healthWait(evaluated(rollout.Running, later, rollout.TargetInProgress), 5*time.Minute), want: WaitApply, until: now.Add(ApplyCap)},
		{name: "a stage bakes with nothing in flight", in: baking(evaluated(rollout.Running, later, rollout.TargetSucceeded, rollout.TargetPending)), want: WaitBake, until: later},
		{name: "a stage bakes while others verify: the health wait shows", in: baking(evaluated(rollout.Running, soon, rollout.TargetVerifying)), want: WaitHealth, until: soon},
	}
	for _, c := range cases {
		d := Decide(c.in, now)
		if d.Verdict != c.want || !d.WaitUntil.Equal(c.until) {
			t.Errorf("%s: %s until %v, want %s until %v", c.name, d.Verdict, d.WaitUntil, c.want, c.until)
		}
	}
}

// A park lasts until the next deadline (an approval's expiry, a freeze's
// end), in whole seconds, at least one, at most what Step Functions accepts.
func TestDecide_ParkSeconds(t *testing.T) {
	cases := []struct {
		name     string
		status   rollout.Status
		deadline time.Time
		want     int64
	}{
		{name: "no deadline: the longest park", status: rollout.WaitingApproval, want: MaxParkSeconds},
		{name: "an expiry in 90s", status: rollout.WaitingApproval, deadline: now.Add(90 * time.Second), want: 90},
		{name: "a fraction of a second rounds up", status: rollout.Frozen, deadline: now.Add(90*time.Second + 200*time.Millisecond), want: 91},
		{name: "a deadline past: one second", status: rollout.Frozen, deadline: now.Add(-time.Minute), want: 1},
		{name: "a deadline years away: the longest park", status: rollout.Frozen, deadline: now.Add(10 * 365 * 24 * time.Hour), want: MaxParkSeconds},
	}
	for _, c := range cases {
		d := Decide(evaluated(c.status, c.deadline, rollout.TargetPending), now)
		if d.ParkSeconds != c.want || !d.WaitUntil.IsZero() {
			t.Errorf("%s: park %ds until %v, want %ds and no Wait", c.name, d.ParkSeconds, d.WaitUntil, c.want)
		}
	}
	if d := Decide(evaluated(rollout.Running, now.Add(time.Minute), rollout.TargetVerifying), now); d.ParkSeconds != 0 {
		t.Errorf("a Wait has no park timeout, got %ds", d.ParkSeconds)
	}
}

// ContinueAfter, when set, replaces MaxIterations (tests of the state
// machine continue after a few evaluations).
func TestDecide_ContinueAfter(t *testing.T) {
	in := evaluated(rollout.Running, now.Add(time.Minute), rollout.TargetVerifying)
	in.Iteration, in.ContinueAfter = 3, 3
	if d := Decide(in, now); d.Verdict != Continue {
		t.Errorf("iteration 3 of 3: %s, want %s", d.Verdict, Continue)
	}
	in.Iteration = 2
	if d := Decide(in, now); d.Verdict != WaitHealth {
		t.Errorf("iteration 2 of 3: %s, want %s", d.Verdict, WaitHealth)
	}
}
