// Package route decides where the rollout state machine
// (statemachines/rollout.asl.json) goes after each evaluation of a rollout:
// done, failed, reading gates, parked on a task token (approval, freeze,
// pause), waiting until a moment, or continuing as a new execution. It is
// pure, with the clock as input, so that the engine's task
// (adapters/enginetask), which only formats the decision for the state machine,
// and the forecast (core/predict), which sleeps as the state machine would,
// share one rule without linking the AWS SDK.
package route

import (
	"math"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/rollout"
)

// Verdict names a branch of the state machine's "What next?" choice; the
// strings are those the choice matches.
type Verdict string

// The verdicts.
const (
	WaitHealth   Verdict = "wait_health"
	WaitApply    Verdict = "wait_apply"
	WaitWindow   Verdict = "wait_window"
	WaitOffline  Verdict = "wait_offline"
	WaitRollback Verdict = "wait_rollback"
	WaitBake     Verdict = "wait_bake"
	ReadGates    Verdict = "read_gates"
	Approval     Verdict = "waiting_approval"
	Frozen       Verdict = "frozen"
	Paused       Verdict = "paused"
	Failed       Verdict = "failed"
	Continue     Verdict = "continue"
	Done         Verdict = "done"
)

// Timing of the loop.
const (
	// LostEventCap bounds a Wait while targets are in flight, so that a lost
	// agent event is noticed within a minute.
	LostEventCap = time.Minute
	// ApplyCap bounds a Wait while targets were started and none verifies
	// yet: the agent-event path moves them to verifying between two
	// evaluations, and the next evaluation must learn the health wait's
	// exact end soon, since a Wait state cannot be shortened once it runs.
	// A health wait shorter than the cap bounds it instead.
	ApplyCap = 10 * time.Second
	// IdleCap bounds a Wait with nothing in flight (a window days away).
	IdleCap = 6 * time.Hour
	// MaxIterations is the number of evaluations after which the execution
	// continues as a new one: about 11 history events an evaluation keeps
	// it well under the service's 25,000-event limit.
	MaxIterations = 1000
	// MaxParkSeconds is the longest task timeout Step Functions accepts: a
	// park with nothing scheduled.
	MaxParkSeconds = 99999999
)

// Input is what an evaluation of a rollout left, and where the execution
// stands.
type Input struct {
	Rollout rollout.Rollout
	// Targets of the rollout after the evaluation: those in flight set the
	// cap of a wait.
	Targets []rollout.Target
	// GatesDue says a gate reading is due.
	GatesDue bool
	// NextDeadline is the engine's next deadline; zero for none.
	NextDeadline time.Time
	// Iteration counts the evaluations of this execution, this one included.
	Iteration int
	// ContinueAfter is the iteration from which a wait becomes Continue;
	// 0 means MaxIterations.
	ContinueAfter int
}

// Decision is the route of the execution after an evaluation.
type Decision struct {
	Verdict Verdict
	// WaitUntil is when the Wait state ends, rounded up to a whole second;
	// zero when the verdict does not wait (done, failed, gates, parks).
	WaitUntil time.Time
	// ParkSeconds bounds a park for approval or a freeze (the state
	// machine's TimeoutSecondsPath), so that an approval expires and a
	// freeze ends even if nobody acts; zero for other verdicts.
	ParkSeconds int64
}

// Decide routes the execution after an evaluation.
//
// A paused rollout or one waiting for approval keeps sleeping while targets
// are in flight (their health waits are evaluated to the end) and parks on a
// task token only when nothing is scheduled. Waits are capped (waitLimit):
// ApplyCap while targets apply, LostEventCap while others are in flight,
// IdleCap otherwise. After ContinueAfter evaluations a wait becomes
// Continue, so the history stays short.
func Decide(in Input, now time.Time) Decision {
	r := in.Rollout
	switch {
	case r.Status.Final():
		return Decision{Verdict: Done}
	case r.Status == rollout.Failed:
		return Decision{Verdict: Failed}
	case in.GatesDue:
		return Decision{Verdict: ReadGates}
	}
	c := count(in.Targets)
	inFlight := c.inProgress+c.verifying > 0 || r.Status == rollout.RollingBack
	switch {
	case !inFlight && (r.Status == rollout.WaitingApproval || r.Status == rollout.Frozen):
		return park(r.Status, in.NextDeadline, now)
	case !inFlight && r.Status == rollout.Paused && in.NextDeadline.IsZero():
		return Decision{Verdict: Paused}
	}
	d := Decision{Verdict: waitKind(r.Status, c)}
	if !inFlight && baking(r) {
		d.Verdict = WaitBake
	}
	d.WaitUntil = waitUntil(now.Add(waitLimit(d.Verdict, r, c, inFlight)), in.NextDeadline, now)
	continueAfter := in.ContinueAfter
	if continueAfter <= 0 {
		continueAfter = MaxIterations
	}
	if in.Iteration >= continueAfter {
		d.Verdict = Continue
	}
	return d
}

// park parks the execution on a task token, so that an approval or a
// freeze override wakes it at once, with a timeout at the next deadline
// (the approval's expiry, the freeze's end), after which the execution
// evaluates again. A deadline 90.2 s away parks for 91 s; none, or one
// past MaxParkSeconds, parks for MaxParkSeconds; one past parks for 1 s.
func park(s rollout.Status, deadline, now time.Time) Decision {
	d := Decision{Verdict: Approval, ParkSeconds: MaxParkSeconds}
	if s == rollout.Frozen {
		d.Verdict = Frozen
	}
	if !deadline.IsZero() {
		d.ParkSeconds = min(max(int64(math.Ceil(deadline.Sub(now).Seconds())), 1), MaxParkSeconds)
	}
	return d
}

// waitLimit is the longest a Wait may last. While targets apply and none
// verifies, no target started can end its health wait sooner than
// healthWait from now: a health wait shorter than ApplyCap is waited for,
// so that the evaluation after it learns the first ends in time
// (healthWait 3s → 3s; 5m → ApplyCap, 10s).
func waitLimit(v Verdict, r rollout.Rollout, c counts, inFlight bool) time.Duration {
	switch {
	case v == WaitApply && c.inProgress > 0:
		if hw := r.Policy.HealthWait; hw > 0 && hw < ApplyCap {
			return hw
		}
		return ApplyCap
	case inFlight:
		return LostEventCap
	}
	return IdleCap
}

// waitUntil is the end of a Wait: the earlier of the cap and the engine's
// deadline, not before now, rounded up to a whole second because Step
// Functions truncates a Wait's timestamp (a deadline at 12:00:20.4 waits
// until 12:00:21, so the execution never wakes before it).
func waitUntil(capped, deadline, now time.Time) time.Time {
	until := capped
	if !deadline.IsZero() && deadline.Before(until) {
		until = deadline
	}
	if until.Before(now) {
		until = now
	}
	return engine.WholeSecondAfter(until)
}

// counts are the targets by the statuses that decide a wait.
type counts struct{ inProgress, verifying, waitingWindow, pending int }

func count(ts []rollout.Target) counts {
	var c counts
	for _, t := range ts {
		switch t.Status {
		case rollout.TargetInProgress:
			c.inProgress++
		case rollout.TargetVerifying:
			c.verifying++
		case rollout.TargetWaitingWindow:
			c.waitingWindow++
		case rollout.TargetPending:
			c.pending++
		}
	}
	return c
}

// waitKind names what the rollout waits for, for the console.
func waitKind(s rollout.Status, c counts) Verdict {
	switch {
	case s == rollout.RollingBack:
		return WaitRollback
	case c.verifying > 0:
		return WaitHealth
	case c.inProgress > 0:
		return WaitApply
	case c.waitingWindow > 0:
		return WaitWindow
	case c.pending > 0:
		return WaitOffline
	}
	return WaitApply
}

// baking reports whether a stage waits for its bake to end.
func baking(r rollout.Rollout) bool {
	for _, s := range r.Stages {
		if s.Status == rollout.StageBaking {
			return true
		}
	}
	return false
}
