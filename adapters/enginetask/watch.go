package enginetask

import (
	"context"
	"sync"
	"time"

	"github.com/myriarch/myriarch/core/engine"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// Asking a watching executor (executor.Watcher, the AWX executor) about the
// updates it started. The evaluate task of the state machine asks it once
// per evaluation, before the engine decides, and hands the failures it reports to
// the engine as observations (engine.Input.ExecutorFailures), as it hands
// over the agents: the engine fails the targets, so that the threshold,
// onFailure and the next deadline follow from one decision. The task runs
// at least every route.ApplyCap (10 s) while targets wait for their update and
// every route.LostEventCap (1 min) while others are in the health wait, which is
// how often a job is polled. Evaluations after an agent event or an operator
// action do not ask: an executor is not polled once per agent report.

const (
	// watchConcurrency bounds the questions in flight at once.
	watchConcurrency = 8
	// watchBudget bounds the time an evaluation spends asking; a target not asked
	// within it is asked at the next evaluation.
	watchBudget = 20 * time.Second
)

// watched lists the targets whose executor may know more than the agent:
// in progress with the external reference of a started update. Rollbacks
// are not asked: a reset that does not bring the agent back fails the
// rollback at its applyTimeout.
func watched(in engine.Input) []rollout.Target {
	r := in.Rollout
	if r.Kind != policy.KindVersion {
		return nil
	}
	switch r.Status {
	case rollout.Pending, rollout.Running, rollout.WaitingApproval, rollout.Paused, rollout.Frozen:
	default:
		return nil
	}
	var out []rollout.Target
	for _, t := range in.Targets {
		if t.Status == rollout.TargetInProgress && t.ExternalRef != "" && t.RollbackAt == nil {
			out = append(out, t)
		}
	}
	return out
}

// askExecutor asks the rollout's executor, if it watches its updates, about
// the watched targets, at most watchConcurrency at a time. A question that
// fails is logged and changes nothing: the next evaluation asks again, and
// applyTimeout still bounds the target.
func (p Evaluator) askExecutor(ctx context.Context, in engine.Input) map[string]engine.ExecutorFailure {
	ts := watched(in)
	if len(ts) == 0 {
		return nil
	}
	r := in.Rollout
	ex, err := p.Executors.For(r.Executor)
	if err != nil {
		return nil
	}
	w, ok := ex.(executor.Watcher)
	if !ok {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, watchBudget)
	defer cancel()
	var (
		mu       sync.Mutex
		failures = map[string]engine.ExecutorFailure{}
		wg       sync.WaitGroup
		slots    = make(chan struct{}, watchConcurrency)
	)
	for _, t := range ts {
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			p.logger().Warn("executor not asked about every target within the budget", "rollout", r.ID, "executor", r.Executor, "budget", watchBudget)
			wg.Wait()
			return failures
		}
		wg.Add(1)
		go func() {
			defer func() { <-slots; wg.Done() }()
			call := executor.Call{Rollout: r, Target: t, Agent: in.Agents[t.AgentID], Version: t.ToRef, Operation: executor.OpStart}
			reason, failed, err := w.Failed(ctx, call)
			switch {
			case err != nil:
				p.logger().Warn("executor could not say whether an update failed", "rollout", r.ID, "agent", t.AgentID, "ref", t.ExternalRef, "error", err)
			case failed:
				p.logger().Info("executor reports a failed update", "rollout", r.ID, "agent", t.AgentID, "ref", t.ExternalRef, "reason", reason)
				mu.Lock()
				failures[t.AgentID] = engine.ExecutorFailure{ExternalRef: t.ExternalRef, Reason: reason}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	return failures
}
