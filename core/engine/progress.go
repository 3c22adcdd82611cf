package engine

import (
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/progress"
	"github.com/myriarch/myriarch/core/rollout"
)

// deriveProgress refreshes the live progress of every started version
// target. progress.Derive returns the previous value when nothing changed
// and keeps final targets frozen, except while it follows a host-side
// health check or rollback after the engine failed the target.
func (e *evaluation) deriveProgress() {
	if e.r.Kind != policy.KindVersion {
		return
	}
	for _, t := range e.all.withStartedAt() {
		a, _ := e.agent(t.AgentID)
		next := progress.Derive(t.Progress, facts(e.r, *t), a, e.now)
		t.Progress = next
		if next.Following() {
			e.dl.at(*next.FollowUntil)
		}
	}
}

func facts(r rollout.Rollout, t rollout.Target) progress.TargetFacts {
	return progress.TargetFacts{
		Status: string(t.Status), Reason: t.Reason, Attempt: t.Attempt,
		FromVersion: t.FromRef, ToVersion: t.ToRef,
		StartedAt: t.StartedAt, VerifiedAt: t.VerifiedAt, FinishedAt: t.FinishedAt, RollbackAt: t.RollbackAt,
		Executor: r.Executor,
	}
}
