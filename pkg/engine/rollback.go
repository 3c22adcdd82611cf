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
func (p *pass) startRollback(reason string) {
	p.r.Status = rollout.RollingBack
	p.r.StatusReason = reason
	p.r.RollbackStartedAt = timePtr(p.now)
	p.emit("rollout.rolling_back", reason)
	for i := range p.ts {
		t := &p.ts[i]
		switch {
		case t.Status.NotStarted():
			p.cancel(i, "cancelled by the rollback")
		case t.Status.Started():
			if a, ok := p.agent(t.AgentID); !ok || a.Fleet != p.r.Fleet {
				p.skip(i, SkipLeftFleet, "the agent left the fleet; the rollback does not touch it")
				continue
			}
			t.RollbackAt = timePtr(p.now)
			p.mark(i)
			p.order(OrderReset, *t, t.FromRef)
		}
	}
	p.evaluateRollback()
}

// evaluateRollback ends targets that are back on their starting state as
// rolled_back. The rollout is rolled_back when all are; failed when the
// rollback does not finish within applyTimeout.
func (p *pass) evaluateRollback() {
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
	if done {
		p.r.Status = rollout.RolledBack
		p.r.FinishedAt = timePtr(p.now)
		p.r.EndOpenWaves(p.now)
		p.emit("rollout.rolled_back", p.r.StatusReason)
		return
	}
	limit := p.r.RollbackStartedAt.Add(p.r.Policy.ApplyTimeout)
	if !p.now.Before(limit) {
		p.failRollout(fmt.Sprintf("the rollback did not finish within applyTimeout %s", p.r.Policy.ApplyTimeout))
		return
	}
	p.dl.at(limit)
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
