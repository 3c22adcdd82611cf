package engine

import (
	"slices"

	"github.com/myriarch/myriarch/core/rollout"
)

// EvaluateTargets is the part of an evaluation that a report of a few
// agents can decide alone: in.Targets are only the targets of those agents,
// and each one in flight (in_progress, verifying) is evaluated as Evaluate
// would, since that step of an evaluation reads nothing but the target, its
// agent and the clock. The result changes no rollout, wave or stage: a
// target that succeeds here may complete its wave, which the next
// evaluation of the whole rollout finds (the state machine's, at the latest
// at the next deadline it knows of). ok is false when the whole rollout
// must decide now:
//
//   - the rollout is pending (its first evaluation begins it) or rolling back;
//   - one of the targets is neither in flight nor final (a pending target
//     may start now that its agent is online, or be skipped now that it left
//     the fleet: the waves decide that);
//   - a target failed (the threshold may be reached: pause, fail or roll
//     back at once), or an order or an event came out of it.
//
// A start ordered again (a configuration target in progress whose agent is
// not asked for its hash) is left out rather than made a whole evaluation:
// the evaluation that started the target sets the hash right after storing
// it, and if that fails the state machine's retried evaluation orders it
// again. An agent event in between would otherwise make a whole evaluation
// that sets the same hashes as the starting one, at the same time.
//
// An agent-event evaluation is then one read of the rollout and the batch's
// targets and agents instead of every target and agent (docs/engine.md).
func EvaluateTargets(in Input) (res Result, ok bool) {
	e := newEvaluation(in)
	switch e.r.Status {
	case rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen:
	case rollout.Pending, rollout.RollingBack:
		return Result{}, false
	default:
		return e.result(), true // final or failed: nothing is evaluated
	}
	if len(e.all.notStarted()) > 0 {
		return Result{}, false
	}
	e.evaluateInFlight()
	e.orders = slices.DeleteFunc(e.orders, func(o Order) bool { return o.Kind == OrderStart }) // only starts ordered again come out of evaluateInFlight
	e.deriveProgress()
	res = e.result()
	for _, t := range res.Changed {
		if t.Status.Final() && t.Status != rollout.TargetSucceeded {
			return Result{}, false
		}
	}
	if len(res.Orders) > 0 || len(res.Events) > 0 || len(res.GatesDue) > 0 || res.RolloutChanged {
		return Result{}, false
	}
	return res, true
}
