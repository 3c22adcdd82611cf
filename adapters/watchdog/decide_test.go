package watchdog

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/rollout"
)

var t0 = time.Date(2026, 3, 1, 12, 0, 0, 0, time.UTC)

func TestDecide(t *testing.T) {
	arn := "arn:aws:states:us-east-1:123456789012:execution:myriarch-rollout:r-1"
	ended := ExecutionState{Status: "FAILED", Stopped: t0}
	cases := []struct {
		name   string
		r      rollout.Rollout
		ex     ExecutionState
		now    time.Time
		resume bool
	}{
		{name: "a final rollout needs nothing, whatever its execution", r: rollout.Rollout{Status: rollout.Completed, ExecutionArn: arn}, ex: ExecutionState{Missing: true}, now: t0, resume: false},
		{name: "a running execution needs nothing", r: rollout.Rollout{Status: rollout.Running, ExecutionArn: arn}, ex: ExecutionState{Running: true, Status: "RUNNING"}, now: t0, resume: false},
		{name: "a recorded execution that is missing is resumed at once", r: rollout.Rollout{Status: rollout.WaitingApproval, ExecutionArn: arn}, ex: ExecutionState{Missing: true}, now: t0, resume: true},
		{name: "no execution yet, within grace of creation: the planner is starting it", r: rollout.Rollout{Status: rollout.Pending, CreatedAt: t0}, ex: ExecutionState{Missing: true}, now: t0.Add(DefaultGrace - time.Second), resume: false},
		{name: "no execution at grace after creation is resumed", r: rollout.Rollout{Status: rollout.Pending, CreatedAt: t0}, ex: ExecutionState{Missing: true}, now: t0.Add(DefaultGrace), resume: true},
		{name: "an ended execution within grace may be continuing as new", r: rollout.Rollout{Status: rollout.Running, ExecutionArn: arn}, ex: ended, now: t0.Add(DefaultGrace - time.Second), resume: false},
		{name: "an ended execution past grace is resumed", r: rollout.Rollout{Status: rollout.Running, ExecutionArn: arn}, ex: ended, now: t0.Add(DefaultGrace), resume: true},
		{name: "a failed rollout is active: its execution must run", r: rollout.Rollout{Status: rollout.Failed, ExecutionArn: arn}, ex: ended, now: t0.Add(time.Hour), resume: true},
		{name: "a paused rollout whose execution succeeded is resumed", r: rollout.Rollout{Status: rollout.Paused, ExecutionArn: arn}, ex: ExecutionState{Status: "SUCCEEDED", Stopped: t0}, now: t0.Add(time.Hour), resume: true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			v := Decide(c.r, c.ex, c.now, DefaultGrace)
			if v.Resume != c.resume {
				t.Fatalf("Resume = %v (%q), want %v", v.Resume, v.Why, c.resume)
			}
			if v.Resume && v.Why == "" {
				t.Error("a resume must say why")
			}
		})
	}
}

func TestApprovalWait(t *testing.T) {
	since := func(d time.Duration) *time.Time { at := t0.Add(-d); return &at }
	r := rollout.Rollout{Status: rollout.WaitingApproval, Waves: []rollout.Wave{
		{Index: 0, Status: rollout.WaveCompleted},
		{Index: 1, WaitingSince: since(3 * time.Hour), Approved: true},
		{Index: 2, WaitingSince: since(2 * time.Hour)},
	}}
	if got := ApprovalWait(r, t0); got != 2*time.Hour {
		t.Errorf("ApprovalWait = %s, want 2h: the approved wave waits no more", got)
	}
	r.Status = rollout.Paused
	if got := ApprovalWait(r, t0); got != 0 {
		t.Errorf("a rollout that does not wait for approval: %s, want 0", got)
	}
}
