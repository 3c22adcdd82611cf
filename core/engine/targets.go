package engine

import (
	"maps"

	"github.com/myriarch/myriarch/core/rollout"
)

// targets are some targets of one evaluation, as pointers into its working
// copy: a decision that changes one changes it there, and the result finds
// the change by comparing with the input (changedTargets). The filters name
// the sets the decisions read, after Nomad's allocSet and classifyAllocs:
// a decision asks for e.all.inWave(w).notStarted() instead of scanning every
// target with its own `if t.Wave != w { continue }`.
type targets []*rollout.Target

// targetsOf points at every target of ts.
func targetsOf(ts []rollout.Target) targets {
	out := make(targets, len(ts))
	for i := range ts {
		out[i] = &ts[i]
	}
	return out
}

// filter keeps the targets that keep selects, in their order.
func (ts targets) filter(keep func(*rollout.Target) bool) targets {
	var out targets
	for _, t := range ts {
		if keep(t) {
			out = append(out, t)
		}
	}
	return out
}

// inWave are the targets of wave w.
func (ts targets) inWave(w int) targets {
	return ts.filter(func(t *rollout.Target) bool { return t.Wave == w })
}

// inStage are the targets of stage s (of a rollout with stages).
func (ts targets) inStage(s int) targets {
	return ts.filter(func(t *rollout.Target) bool { return t.Stage == s })
}

// notFinal are the targets that may still change by themselves: pending,
// waiting for a window, in progress or verifying.
func (ts targets) notFinal() targets {
	return ts.filter(func(t *rollout.Target) bool { return !t.Status.Final() })
}

// allFinal reports whether every target is final (true for none).
func (ts targets) allFinal() bool {
	for _, t := range ts {
		if !t.Status.Final() {
			return false
		}
	}
	return true
}

// notStarted are the targets that may still start: pending or waiting for
// a maintenance window.
func (ts targets) notStarted() targets {
	return ts.filter(func(t *rollout.Target) bool { return t.Status.NotStarted() })
}

// inFlight are the targets an update is under way for: in progress or
// verifying (maxConcurrent counts them).
func (ts targets) inFlight() targets {
	return ts.filter(func(t *rollout.Target) bool {
		return t.Status == rollout.TargetInProgress || t.Status == rollout.TargetVerifying
	})
}

// withStatus are the targets in status s.
func (ts targets) withStatus(s rollout.TargetStatus) targets {
	return ts.filter(func(t *rollout.Target) bool { return t.Status == s })
}

// started are the targets that were started and may have to return to
// their starting state: in progress, verifying, succeeded or failed.
func (ts targets) started() targets {
	return ts.filter(func(t *rollout.Target) bool { return t.Status.Started() })
}

// withStartedAt are the targets started in their current attempt, whatever
// came after (a rolled back or cancelled target too).
func (ts targets) withStartedAt() targets {
	return ts.filter(func(t *rollout.Target) bool { return t.StartedAt != nil })
}

// inBatches are the targets of the batch that allowed gives their pass
// (batch per pass index; a pass it does not name has none).
func (ts targets) inBatches(allowed map[int]int) targets {
	return ts.filter(func(t *rollout.Target) bool {
		b, ok := allowed[t.Pass]
		return ok && t.Batch == b
	})
}

// currentBatches gives, per pass, the batch that may start: the batch in
// flight, if one is, else the lowest batch with a target that is not final.
// A target that retry-failed sent back to an earlier batch waits until the
// batch in flight is final: one batch (maxUnavailable targets) at a time,
// whatever order the batches come back in. Example: pass 0 with batch 0
// succeeded, batch 1 in flight and a retried target of batch 0 → 1.
func (ts targets) currentBatches() map[int]int {
	current, flying := map[int]int{}, map[int]int{}
	lowest := func(m map[int]int, t *rollout.Target) {
		if b, ok := m[t.Pass]; !ok || t.Batch < b {
			m[t.Pass] = t.Batch
		}
	}
	for _, t := range ts.notFinal() {
		lowest(current, t)
	}
	for _, t := range ts.inFlight() {
		lowest(flying, t)
	}
	maps.Copy(current, flying)
	return current
}

// classes split the targets of a wave by what its failure rules ask of them
// (classify).
type classes struct {
	all        targets
	notStarted targets // pending or waiting for a window: they may still start
	started    targets // started in their current attempt (startedAt set), whatever came after
	failed     targets // failed and not acknowledged by a resume
	// executorFailed are the failed targets whose executor's Start or
	// Validate failed (FailExecutor): the executor, not the update, failed.
	executorFailed targets
}

// classify splits ts into its classes; acked are the attempt keys
// (agentId#attempt) of the failures a resume acknowledged.
func (ts targets) classify(acked map[string]bool) classes {
	c := classes{all: ts}
	for _, t := range ts {
		if t.Status.NotStarted() {
			c.notStarted = append(c.notStarted, t)
		}
		if t.StartedAt != nil {
			c.started = append(c.started, t)
		}
		if t.Status == rollout.TargetFailed && !acked[t.AttemptKey()] {
			c.failed = append(c.failed, t)
			if t.ReasonCode == FailExecutor {
				c.executorFailed = append(c.executorFailed, t)
			}
		}
	}
	return c
}

// cannotContinue: no target of the wave can still start, and every one that
// started failed in the executor (a misconfigured executor fails all it
// touches). While targets remain that may start, a failed Start is one
// failure among others and counts toward the threshold: with maxConcurrent 1
// a transient error of the first Start must not fail the whole rollout.
func (c classes) cannotContinue() bool {
	return len(c.notStarted) == 0 && len(c.started) > 0 && len(c.executorFailed) == len(c.started)
}

// changedTargets are the targets of after that differ from those of before
// (the same targets, in the same order, before the evaluation changed
// them), in their order. Every field of a target is a value or a pointer
// the evaluation replaces rather than writes through, so != sees each
// change.
func changedTargets(before, after []rollout.Target) []rollout.Target {
	var out []rollout.Target
	for i := range after {
		if after[i] != before[i] {
			out = append(out, after[i])
		}
	}
	return out
}
