package enginetask

import (
	"time"

	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/route"
)

// Verdict formats the route of the execution after an evaluation
// (route.Decide) as the state machine reads it: the verdict its "What
// next?" choice matches, the moment its Wait state ends (RFC 3339, UTC),
// the timeout of a park, and the wave and stage the console shows.
func Verdict(res Evaluated, iteration, continueAfter int, now time.Time) Output {
	r := res.Rollout
	d := route.Decide(route.Input{
		Rollout:       r,
		Targets:       res.Targets,
		GatesDue:      len(res.GatesDue) > 0,
		NextDeadline:  res.NextDeadline,
		Iteration:     iteration,
		ContinueAfter: continueAfter,
	}, now)
	out := Output{RolloutID: r.ID, Iteration: iteration, Verdict: string(d.Verdict), Status: string(r.Status),
		Wave: currentWave(r), Stage: currentStage(r), Reason: r.StatusReason, TimeoutSeconds: d.ParkSeconds}
	if !d.WaitUntil.IsZero() {
		out.WaitUntil = d.WaitUntil.UTC().Format(time.RFC3339Nano)
	}
	return out
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
