package engine

import (
	"fmt"

	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// startRollback resets every started target (in_progress, verifying,
// succeeded, failed) to its starting state and cancels the rest. Agents that
// moved to another fleet are not touched and become skipped.
func (e *evaluation) startRollback(reason string) { e.beginRollback(reason, nil) }

// Units of a rollback by stage: a rollout's stages, or its waves when it
// has none (onFailure rollback-wave then rolls back the failed wave).

func (e *evaluation) unitOf(t *rollout.Target) int {
	if len(e.r.Stages) > 0 {
		return t.Stage
	}
	return t.Wave
}

// failedUnit is the unit of wave w that failed: its running stage, or the
// wave itself.
func (e *evaluation) failedUnit(w int) int {
	for s, st := range e.r.Stages {
		if st.Wave == w && (st.Status == rollout.StageRunning || st.Status == rollout.StageBaking) {
			return s
		}
	}
	return w
}

func (e *evaluation) stageName(u int) string {
	if u < len(e.r.Stages) {
		return e.r.Stages[u].Name
	}
	return ""
}

// passedUnitsBefore lists the units before u that passed, nearest first:
// the order in which rollback-all returns them.
func (e *evaluation) passedUnitsBefore(u int) []int {
	var out []int
	for i := u - 1; i >= 0; i-- {
		if len(e.r.Stages) > 0 {
			if st := e.r.Stages[i].Status; st == rollout.StagePassed || st == rollout.StageBaking {
				out = append(out, i)
			}
		} else if e.r.Waves[i].Status == rollout.WaveCompleted {
			out = append(out, i)
		}
	}
	return out
}

// startRollbackOf rolls back unit by unit (onFailure rollback-wave and
// rollback-all): targets that never started are cancelled, and the started
// targets of the first unit of the queue are reset to their starting state;
// the next unit follows when every target of the one before is back (each
// within applyTimeout). Units not in the queue stay on the new state.
func (e *evaluation) startRollbackOf(reason string, queue []int) { e.beginRollback(reason, queue) }

// beginRollback enters rolling_back, cancels the targets that never
// started and resets the started ones: all of them without a queue, those
// of the queue's first unit with one.
func (e *evaluation) beginRollback(reason string, queue []int) {
	e.r.EndPasses(e.ts, e.now)
	e.r.Status = rollout.RollingBack
	e.r.StatusReason = reason
	e.r.RollbackStartedAt = timePtr(e.now)
	e.r.RollbackQueue = queue
	e.emit(rollout.EventRollingBack, reason)
	for _, t := range e.all.notStarted() {
		e.cancel(t, "cancelled by the rollback")
	}
	switch {
	case queue == nil:
		e.reset(func(*rollout.Target) bool { return true })
	case len(queue) > 0:
		e.resetUnit(queue[0])
	}
	e.evaluateRollback()
}

// resetUnit resets the started targets of unit u.
func (e *evaluation) resetUnit(u int) {
	e.reset(func(t *rollout.Target) bool { return e.unitOf(t) == u })
}

// reset orders the started targets that in selects back to their starting
// state; agents that moved to another fleet are not touched and become
// skipped.
func (e *evaluation) reset(in func(*rollout.Target) bool) {
	for _, t := range e.all.started().filter(in) {
		if a, ok := e.agent(t.AgentID); !ok || a.Fleet != e.r.Fleet {
			e.skip(t, SkipLeftFleet, "the agent left the fleet; the rollback does not touch it")
			continue
		}
		t.RollbackAt = timePtr(e.now)
		e.order(OrderReset, *t, t.FromRef)
	}
}

// evaluateRollback ends targets that are back on their starting state as
// rolled_back; with a queue of units, the next unit starts when the current
// one is back. The rollout is rolled_back when all are; failed when a unit
// (or the whole rollback) does not finish within applyTimeout.
func (e *evaluation) evaluateRollback() {
	for !e.rollbackStep() {
	}
}

// rollbackStep evaluates once; it reports false when it started the next
// unit of the queue, which is evaluated at once.
func (e *evaluation) rollbackStep() bool {
	done := true
	for _, t := range e.all.filter(resetNotBack) {
		a, ok := e.agent(t.AgentID)
		switch {
		case !ok || a.Fleet != e.r.Fleet:
			e.skip(t, SkipLeftFleet, "the agent left the fleet; the rollback does not touch it")
		case backOnFrom(e.r.Kind, *t, a):
			t.Status = rollout.TargetRolledBack
			t.FinishedAt = timePtr(e.now)
		default:
			done = false
		}
	}
	if done && len(e.r.RollbackQueue) > 1 {
		e.r.RollbackQueue = e.r.RollbackQueue[1:]
		e.r.RollbackStartedAt = timePtr(e.now)
		e.resetUnit(e.r.RollbackQueue[0])
		return false
	}
	if done {
		e.r.Status = rollout.RolledBack
		e.r.FinishedAt = timePtr(e.now)
		e.r.RollbackQueue = nil
		e.r.EndOpenWaves(e.now)
		e.emit(rollout.EventRolledBack, e.r.StatusReason)
		return true
	}
	limit := e.r.RollbackStartedAt.Add(e.r.Policy.ApplyTimeout)
	if !e.now.Before(limit) {
		e.failRollout(fmt.Sprintf("the rollback did not finish within applyTimeout %s", e.r.Policy.ApplyTimeout))
		return true
	}
	e.dl.at(limit)
	return true
}

// resetNotBack: the rollback reset the target, which is not back yet (nor
// skipped for leaving the fleet).
func resetNotBack(t *rollout.Target) bool {
	return t.RollbackAt != nil && t.Status != rollout.TargetRolledBack && t.Status != rollout.TargetSkipped
}

func backOnFrom(k policy.Kind, t rollout.Target, a agent.Agent) bool {
	if k == policy.KindVersion {
		return a.ServiceVersion == t.FromRef
	}
	return a.RemoteConfig.Hash == t.FromRef && a.RemoteConfig.Status == agent.ConfigApplied
}

func (e *evaluation) cancel(t *rollout.Target, reason string) {
	t.Status = rollout.TargetCancelled
	t.Reason = reason
	t.FinishedAt = timePtr(e.now)
}
