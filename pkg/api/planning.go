package api

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/myriarch/myriarch/pkg/enginetask"
	"github.com/myriarch/myriarch/pkg/execution"
	"github.com/myriarch/myriarch/pkg/executor"
	"github.com/myriarch/myriarch/pkg/planner"
	"github.com/myriarch/myriarch/pkg/policy"
	"github.com/myriarch/myriarch/pkg/rollout"
)

// planRunLimit bounds a planner run that the API stopped waiting for: it
// goes on in the background, so that its writes are not cut off halfway.
const planRunLimit = 2 * time.Minute

// planResult is the schema PlanResult.
type planResult struct {
	Kind           policy.Kind `json:"kind"`
	Planned        bool        `json:"planned"`
	RolloutID      string      `json:"rolloutId,omitempty"`
	Created        bool        `json:"created,omitempty"`
	EndedRolloutID string      `json:"endedRolloutId,omitempty"`
	Stragglers     int         `json:"stragglers"`
	Note           string      `json:"note,omitempty"`
	Error          string      `json:"error,omitempty"`
	targets        int         // of the created rollout
}

// planNow plans a fleet and kind, waiting up to PlanTimeout.
func (s *server) planNow(ctx context.Context, fleetName string, k policy.Kind) planResult {
	budget, cancel := context.WithTimeout(ctx, s.PlanTimeout)
	defer cancel()
	return s.plan(ctx, budget, fleetName, k)
}

// plan asks the planner to plan a fleet and kind and waits until it
// finished or budget is done. Planned is false when it did not finish in
// time or failed; the scheduled planner run catches up either way.
func (s *server) plan(ctx, budget context.Context, fleetName string, k policy.Kind) planResult {
	type outcome struct {
		d   planner.Decision
		err error
	}
	done := make(chan outcome, 1)
	go func() {
		defer func() {
			if v := recover(); v != nil {
				done <- outcome{err: fmt.Errorf("planner panicked: %v", v)}
			}
		}()
		runCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), planRunLimit)
		defer cancel()
		d, err := s.Planning.PlanFleet(runCtx, fleetName, k)
		done <- outcome{d, err}
	}()
	res := planResult{Kind: k}
	select {
	case o := <-done:
		if o.err != nil {
			s.Log.ErrorContext(ctx, "plan fleet", "fleet", fleetName, "kind", string(k), "error", o.err.Error())
			res.Error = "the planner failed; the scheduled run retries"
			return res
		}
		return s.planned(ctx, fleetName, k, o.d)
	case <-budget.Done():
		res.Note = fmt.Sprintf("the planner did not finish within %s; it goes on, and the fleet shows the outcome", s.PlanTimeout)
	}
	return res
}

// planned describes a finished run. The rollout is the one the run created
// or extended, else the fleet's active rollout if it heads for the run's
// target (a rollout that already runs toward it).
func (s *server) planned(ctx context.Context, fleetName string, k policy.Kind, d planner.Decision) planResult {
	res := planResult{Kind: k, Planned: true, Stragglers: len(d.Stragglers), Note: d.Note}
	if d.Ended != nil {
		res.EndedRolloutID = d.Ended.Rollout.ID
	}
	switch {
	case d.Created != nil:
		res.RolloutID, res.Created, res.targets = d.Created.Rollout.ID, true, len(d.Created.Targets)
	case d.Updated != nil:
		res.RolloutID = d.Updated.ID
	case d.Target != "":
		page, err := s.Store.RolloutsPage(ctx, fleetName, k, "", 1)
		if err == nil && len(page.Items) > 0 && page.Items[0].Status.Active() && page.Items[0].ToRef == d.Target {
			res.RolloutID = page.Items[0].ID
		}
	}
	return res
}

// LocalPlanning runs the planner in this process (the local stack, and the
// planner Lambda behind the cloud's Planning) and carries out what a
// decision leaves to its caller: the executor Cancel of superseded version
// targets, waking the parked execution of a rollout the run ended (it has
// nothing left to wait for), and starting the execution of a rollout the
// run created. Runs are serialized; a lost race is planned again.
type LocalPlanning struct {
	Planner   planner.Planner
	Executors executor.Registry
	// SFN starts and wakes executions of StateMachineArn; nil starts none
	// (tests of the planner alone).
	SFN             execution.StepFunctions
	StateMachineArn string
	// Tokens clears the task token of an ended rollout after its wake.
	Tokens execution.Tokens
	Log    *slog.Logger
	// Metrics receives the records of the passes a supersede ended
	// (enginetask.WritePassMetrics); nil writes none.
	Metrics io.Writer
	mu      sync.Mutex
}

// planAttempts bounds the re-runs of a planner run that lost a race.
const planAttempts = 3

// PlanFleet plans one fleet and kind.
func (l *LocalPlanning) PlanFleet(ctx context.Context, fleetName string, k policy.Kind) (planner.Decision, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var d planner.Decision
	var err error
	for attempt := 0; attempt < planAttempts; attempt++ {
		if d, err = l.Planner.Run(ctx, fleetName, k); !errors.Is(err, rollout.ErrConflict) {
			break
		}
	}
	if err != nil {
		return d, err
	}
	l.cancel(ctx, d)
	if d.Ended != nil && d.Ended.Rollout.FinishedAt != nil {
		enginetask.WritePassMetrics(l.Metrics, d.Ended.Before, d.Ended.Rollout, *d.Ended.Rollout.FinishedAt)
	}
	l.wakeEnded(ctx, d)
	return d, l.start(ctx, d)
}

// wakeEnded lets the execution of a rollout the run superseded or failed
// see its new status; parked, it would wait for an operator for ever.
func (l *LocalPlanning) wakeEnded(ctx context.Context, d planner.Decision) {
	if d.Ended == nil || d.Ended.Rollout.TaskToken == "" || l.SFN == nil {
		return
	}
	r := d.Ended.Rollout
	execution.Waker{SFN: l.SFN, Tokens: l.Tokens, Log: l.Log}.Wake(ctx, r.ID, r.TaskToken, "the planner ended the rollout: "+string(r.Status))
}

// start runs the state machine for a created rollout: one execution per
// rollout, named after it, so that a retried start starts nothing new.
func (l *LocalPlanning) start(ctx context.Context, d planner.Decision) error {
	if d.Created == nil || l.SFN == nil {
		return nil
	}
	return execution.Starter{SFN: l.SFN, StateMachineArn: l.StateMachineArn}.Start(ctx, d.Created.Rollout.ID)
}

// cancel withdraws the started updates of the targets a supersede
// cancelled; a failed Cancel is logged, since the target is ended anyway.
func (l *LocalPlanning) cancel(ctx context.Context, d planner.Decision) {
	orders := d.CancelOrders()
	if len(orders) == 0 {
		return
	}
	r := d.Ended.Rollout
	ex, err := l.Executors.For(r.Executor)
	if err != nil {
		l.logger().Warn("cancel superseded targets", "rollout", r.ID, "error", err.Error())
		return
	}
	byAgent := map[string]rollout.Target{}
	for _, t := range d.Ended.Cancelled {
		byAgent[t.AgentID] = t
	}
	for _, o := range orders {
		if err := ex.Cancel(ctx, executor.Call{Rollout: r, Target: byAgent[o.AgentID], Operation: executor.OpCancel}); err != nil {
			l.logger().Warn("executor cancel failed", "rollout", r.ID, "agent", o.AgentID, "error", err.Error())
		}
	}
}

func (l *LocalPlanning) logger() *slog.Logger {
	if l.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return l.Log
}
