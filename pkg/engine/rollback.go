package engine

import (
	"fmt"

	"github.com/myriarch/myriarch/pkg/agent"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// startRollback resets every started target (in_progress, verifying,
// succeeded, failed) to its starting state and cancels the rest. Agents that
// moved to another fleet are not touched and become skipped.
func (p *pass) startRollback(reason string) { p.beginRollback(reason, nil) }

// Units of a rollback by stage: a rollout's stages, or its waves when it
// has none (onFailure rollback-wave then rolls back the failed wave).

func (p *pass) unitOf(t *rollout.Target) int {
	if len(p.r.Stages) > 0 {
		return t.Stage
	}
	return t.Wave
}

// failedUnit is the unit of wave w that failed: its running stage, or the
// wave itself.
func (p *pass) failedUnit(w int) int {
	for s, st := range p.r.Stages {
		if st.Wave == w && (st.Status == rollout.StageRunning || st.Status == rollout.StageBaking) {
			return s
		}
	}
	return w
}

func (p *pass) stageName(u int) string {
	if u < len(p.r.Stages) {
		return p.r.Stages[u].Name
	}
	return ""
}

// passedUnitsBefore lists the units before u that passed, nearest first:
// the order in which rollback-all returns them.
func (p *pass) passedUnitsBefore(u int) []int {
	var out []int
	for i := u - 1; i >= 0; i-- {
		if len(p.r.Stages) > 0 {
			if st := p.r.Stages[i].Status; st == rollout.StagePassed || st == rollout.StageBaking {
				out = append(out, i)
			}
		} else if p.r.Waves[i].Status == rollout.WaveCompleted {
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
func (p *pass) startRollbackOf(reason string, queue []int) { p.beginRollback(reason, queue) }

// beginRollback enters rolling_back, cancels the targets that never
// started and resets the started ones: all of them without a queue, those
// of the queue's first unit with one.
func (p *pass) beginRollback(reason string, queue []int) {
	p.r.EndPasses(p.ts, p.now)
	p.r.Status = rollout.RollingBack
	p.r.StatusReason = reason
	p.r.RollbackStartedAt = timePtr(p.now)
	p.r.RollbackQueue = queue
	p.emit("rollout.rolling_back", reason)
	for i := range p.ts {
		if p.ts[i].Status.NotStarted() {
			p.cancel(i, "cancelled by the rollback")
		}
	}
	switch {
	case queue == nil:
		p.reset(func(*rollout.Target) bool { return true })
	case len(queue) > 0:
		p.resetUnit(queue[0])
	}
	p.evaluateRollback()
}

// resetUnit resets the started targets of unit u.
func (p *pass) resetUnit(u int) { p.reset(func(t *rollout.Target) bool { return p.unitOf(t) == u }) }

// reset orders the started targets that in selects back to their starting
// state; agents that moved to another fleet are not touched and become
// skipped.
func (p *pass) reset(in func(*rollout.Target) bool) {
	for i := range p.ts {
		t := &p.ts[i]
		if !t.Status.Started() || !in(t) {
			continue
		}
		if a, ok := p.agent(t.AgentID); !ok || a.Fleet != p.r.Fleet {
			p.skip(i, SkipLeftFleet, "the agent left the fleet; the rollback does not touch it")
			continue
		}
		t.RollbackAt = timePtr(p.now)
		p.mark(i)
		p.order(OrderReset, *t, t.FromRef)
	}
}

// evaluateRollback ends targets that are back on their starting state as
// rolled_back; with a queue of units, the next unit starts when the current
// one is back. The rollout is rolled_back when all are; failed when a unit
// (or the whole rollback) does not finish within applyTimeout.
func (p *pass) evaluateRollback() {
	for !p.rollbackStep() {
	}
}

// rollbackStep evaluates once; it reports false when it started the next
// unit of the queue, which is evaluated at once.
func (p *pass) rollbackStep() bool {
	done := true
	for i := range p.ts {
		t := &p.ts[i]
		if t.RollbackAt == nil || t.Status == rollout.TargetRolledBack || t.Status == rollout.TargetSkipped {
			continue
		}
		a, ok := p.agent(t.AgentID)
		switch {
		case !ok || a.Fleet != p.r.Fleet:
			p.skip(i, SkipLeftFleet, "the agent left the fleet; the rollback does not touch it")
		case backOnFrom(p.r.Kind, *t, a):
			t.Status = rollout.TargetRolledBack
			t.FinishedAt = timePtr(p.now)
			p.mark(i)
		default:
			done = false
		}
	}
	if done && len(p.r.RollbackQueue) > 1 {
		p.r.RollbackQueue = p.r.RollbackQueue[1:]
		p.r.RollbackStartedAt = timePtr(p.now)
		p.resetUnit(p.r.RollbackQueue[0])
		return false
	}
	if done {
		p.r.Status = rollout.RolledBack
		p.r.FinishedAt = timePtr(p.now)
		p.r.RollbackQueue = nil
		p.r.EndOpenWaves(p.now)
		p.emit("rollout.rolled_back", p.r.StatusReason)
		return true
	}
	limit := p.r.RollbackStartedAt.Add(p.r.Policy.ApplyTimeout)
	if !p.now.Before(limit) {
		p.failRollout(fmt.Sprintf("the rollback did not finish within applyTimeout %s", p.r.Policy.ApplyTimeout))
		return true
	}
	p.dl.at(limit)
	return true
}

func backOnFrom(k policy.Kind, t rollout.Target, a agent.Agent) bool {
	if k == policy.KindVersion {
		return a.ServiceVersion == t.FromRef
	}
	return a.RemoteConfig.Hash == t.FromRef && a.RemoteConfig.Status == agent.ConfigApplied
}

func (p *pass) cancel(i int, reason string) {
	t := &p.ts[i]
	t.Status = rollout.TargetCancelled
	t.Reason = reason
	t.FinishedAt = timePtr(p.now)
	p.mark(i)
}
