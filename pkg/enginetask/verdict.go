package enginetask

import (
	"math"
	"time"

	"github.com/myriarch/myriarch/pkg/engine"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// Verdict turns the result of a pass into the route of the execution and
// the moment its Wait state ends.
//
// A paused rollout or one waiting for approval keeps sleeping while targets
// are in flight (their health waits are evaluated to the end) and parks on a
// task token only when nothing is scheduled. Waits are capped: at
// LostEventCap while targets are in flight, IdleCap otherwise. After
// continueAfter passes (MaxIterations when 0) a wait becomes "continue", so
// the history stays short.
func Verdict(res Passed, iteration, continueAfter int, now time.Time) Output {
	r, targets := res.Rollout, res.Targets
	out := Output{RolloutID: r.ID, Iteration: iteration, Status: string(r.Status), Wave: currentWave(r), Stage: currentStage(r), Reason: r.StatusReason}
	switch {
	case r.Status.Final():
		out.Verdict = VerdictDone
		return out
	case r.Status == rollout.Failed:
		out.Verdict = VerdictFailed
		return out
	}
	if len(res.GatesDue) > 0 {
		out.Verdict = VerdictReadGates
		return out
	}
	c := count(targets)
	inFlight := c.inProgress+c.verifying > 0 || r.Status == rollout.RollingBack
	if !inFlight && (r.Status == rollout.WaitingApproval || r.Status == rollout.Frozen) {
		// parked on a token, so that an approval or a freeze override wakes
		// it at once, with a timeout at the next deadline (the approval's
		// expiry, the freeze's end), after which the execution evaluates again
		out.Verdict, out.TimeoutSeconds = VerdictApproval, maxParkSeconds
		if r.Status == rollout.Frozen {
			out.Verdict = VerdictFrozen
		}
		if !res.NextDeadline.IsZero() {
			out.TimeoutSeconds = min(max(int64(math.Ceil(res.NextDeadline.Sub(now).Seconds())), 1), maxParkSeconds)
		}
		return out
	}
	if res.NextDeadline.IsZero() && !inFlight && r.Status == rollout.Paused {
		out.Verdict = VerdictPaused
		return out
	}
	out.Verdict = waitKind(r.Status, c)
	if !inFlight && baking(r) {
		out.Verdict = VerdictWaitBake
	}
	limit := IdleCap
	switch {
	case out.Verdict == VerdictWaitApply && c.inProgress > 0:
		// No target started can end its health wait sooner than healthWait
		// from now; a shorter health wait than the cap is waited for, so
		// that the pass after it learns the first ends in time.
		limit = ApplyCap
		if hw := r.Policy.HealthWait; hw > 0 && hw < limit {
			limit = hw
		}
	case inFlight:
		limit = LostEventCap
	}
	until := now.Add(limit)
	if !res.NextDeadline.IsZero() && res.NextDeadline.Before(until) {
		until = res.NextDeadline
	}
	if until.Before(now) {
		until = now
	}
	out.WaitUntil = engine.WholeSecondAfter(until).UTC().Format(time.RFC3339Nano)
	if continueAfter <= 0 {
		continueAfter = MaxIterations
	}
	if iteration >= continueAfter {
		out.Verdict = VerdictContinue
	}
	return out
}

// maxParkSeconds is the longest task timeout Step Functions accepts: a park
// with nothing scheduled.
const maxParkSeconds = 99999999

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
func waitKind(s rollout.Status, c counts) string {
	switch {
	case s == rollout.RollingBack:
		return VerdictWaitRollback
	case c.verifying > 0:
		return VerdictWaitHealth
	case c.inProgress > 0:
		return VerdictWaitApply
	case c.waitingWindow > 0:
		return VerdictWaitWindow
	case c.pending > 0:
		return VerdictWaitOffline
	}
	return VerdictWaitApply
}

// currentWave names the wave the rollout works on or waits for.
func currentWave(r rollout.Rollout) string {
	if w := r.CurrentWave(); w != nil {
		return w.Name
	}
	return ""
}

// currentStage names the first stage that has not passed.
func currentStage(r rollout.Rollout) string {
	if s := r.CurrentStage(); s != nil {
		return s.Name
	}
	return ""
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
