package enginetask

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/pkg/engine"
	"github.com/myriarch/myriarch/pkg/rollout"
)

var now = time.Date(2026, 3, 2, 12, 0, 0, 0, time.UTC)

func passed(st rollout.Status, deadline time.Time, statuses ...rollout.TargetStatus) Passed {
	p := Passed{Result: engine.Result{Rollout: rollout.Rollout{ID: "r1", Status: st,
		Waves: []rollout.Wave{{Name: "canary", Status: rollout.WaveCompleted}, {Name: "rest", Status: rollout.WaveRunning}}},
		NextDeadline: deadline}}
	for _, s := range statuses {
		p.Targets = append(p.Targets, rollout.Target{Status: s})
	}
	return p
}

func TestVerdict(t *testing.T) {
	soon, later := now.Add(20*time.Second), now.Add(3*time.Hour)
	type verdictCase struct {
		name    string
		in      Passed
		iter    int
		verdict string
		until   time.Time
	}
	cases := []verdictCase{
		{"completed", passed(rollout.Completed, time.Time{}), 1, VerdictDone, time.Time{}},
		{"superseded", passed(rollout.Superseded, time.Time{}), 1, VerdictDone, time.Time{}},
		{"failed parks", passed(rollout.Failed, soon, rollout.TargetVerifying), 1, VerdictFailed, time.Time{}},
		{"health wait ends soon", passed(rollout.Running, soon, rollout.TargetVerifying), 1, VerdictWaitHealth, soon},
		{"applying: capped short, a health wait may begin any moment", passed(rollout.Running, later, rollout.TargetInProgress), 1, VerdictWaitApply, now.Add(ApplyCap)},
		{"verifying and applying: capped at a minute", passed(rollout.Running, later, rollout.TargetInProgress, rollout.TargetVerifying), 1, VerdictWaitHealth, now.Add(LostEventCap)},
		{"window hours away: sleeps until it opens", passed(rollout.Running, later, rollout.TargetWaitingWindow), 1, VerdictWaitWindow, later},
		{"window days away: capped", passed(rollout.Running, now.Add(72*time.Hour), rollout.TargetWaitingWindow), 1, VerdictWaitWindow, now.Add(IdleCap)},
		{"offline agents", passed(rollout.Running, soon, rollout.TargetPending), 1, VerdictWaitOffline, soon},
		{"rolling back", passed(rollout.RollingBack, later, rollout.TargetSucceeded), 1, VerdictWaitRollback, now.Add(LostEventCap)},
		{"approval with nothing in flight parks", passed(rollout.WaitingApproval, time.Time{}, rollout.TargetPending), 1, VerdictApproval, time.Time{}},
		{"paused with nothing in flight parks", passed(rollout.Paused, time.Time{}, rollout.TargetSucceeded), 1, VerdictPaused, time.Time{}},
		{"paused keeps evaluating health waits", passed(rollout.Paused, soon, rollout.TargetVerifying), 1, VerdictWaitHealth, soon},
		{"long history continues", passed(rollout.Running, soon, rollout.TargetVerifying), MaxIterations, VerdictContinue, soon},
		{"one pass before the limit", passed(rollout.Running, soon, rollout.TargetVerifying), MaxIterations - 1, VerdictWaitHealth, soon},
		{"deadline in the past: no wait", passed(rollout.Running, now.Add(-time.Second), rollout.TargetVerifying), 1, VerdictWaitHealth, now},
		// Step Functions truncates a Wait's timestamp to whole seconds: a
		// deadline 400ms past a second is asked as the next second, so the
		// execution never wakes before it (and evaluates again in a loop).
		{"deadline with a fraction of a second: rounded up", passed(rollout.Running, soon.Add(400*time.Millisecond), rollout.TargetVerifying), 1, VerdictWaitHealth, soon.Add(time.Second)},
	}
	shortWait := passed(rollout.Running, later, rollout.TargetInProgress)
	shortWait.Rollout.Policy.HealthWait = 3 * time.Second
	longWait := passed(rollout.Running, later, rollout.TargetInProgress)
	longWait.Rollout.Policy.HealthWait = 5 * time.Minute
	cases = append(cases, []verdictCase{
		{"applying, health wait shorter than the cap: waits the health wait", shortWait, 1, VerdictWaitApply, now.Add(3 * time.Second)},
		{"applying, health wait longer than the cap: capped", longWait, 1, VerdictWaitApply, now.Add(ApplyCap)},
	}...)
	for _, c := range cases {
		out := Verdict(c.in, c.iter, 0, now)
		if out.Verdict != c.verdict {
			t.Errorf("%s: verdict %s, want %s", c.name, out.Verdict, c.verdict)
		}
		var want string
		if !c.until.IsZero() {
			want = c.until.Format(time.RFC3339Nano)
		}
		if out.WaitUntil != want {
			t.Errorf("%s: waitUntil %q, want %q", c.name, out.WaitUntil, want)
		}
	}
	if out := Verdict(passed(rollout.Running, soon, rollout.TargetVerifying), 3, 0, now); out.Wave != "rest" || out.Iteration != 3 {
		t.Errorf("wave %q iteration %d, want rest and 3", out.Wave, out.Iteration)
	}
	// A stage baking with nothing in flight: the console shows Baking and the stage.
	bake := passed(rollout.Running, later, rollout.TargetSucceeded, rollout.TargetPending)
	bake.Rollout.Stages = []rollout.Stage{{Name: "rest/eu-1a", Status: rollout.StageBaking}, {Name: "rest/eu-1b", Status: rollout.StagePending}}
	if out := Verdict(bake, 1, 0, now); out.Verdict != VerdictWaitBake || out.Stage != "rest/eu-1a" || out.WaitUntil != later.Format(time.RFC3339Nano) {
		t.Errorf("baking: verdict %s stage %q until %s, want %s, rest/eu-1a, the bake's end", out.Verdict, out.Stage, out.WaitUntil, VerdictWaitBake)
	}
}
