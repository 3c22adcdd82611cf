package plannertask

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"sync"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/execution"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/planner"
	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// Runner runs the planner in this process (the planner Lambda, and the
// local stack) and carries out what a decision leaves to its caller.
type Runner struct {
	Planner   planner.Planner
	Executors executor.Registry
	// SFN starts and wakes executions of StateMachineArn; nil starts none
	// (tests of the planner alone).
	SFN             execution.StepFunctions
	StateMachineArn string
	// Tokens clears the task token of an ended rollout after its wake; nil
	// clears none.
	Tokens execution.Tokens
	Log    *slog.Logger
	// Metrics receives the records of the evaluations a supersede ended
	// (enginetask.WritePassMetrics); nil writes none.
	Metrics io.Writer
	mu      sync.Mutex
}

// planAttempts bounds the re-runs of a planner run that lost a race.
const planAttempts = 3

// PlanFleet plans one fleet and kind: run, cancel what a supersede
// withdrew, write its evaluation metrics, wake the ended rollout, start the
// created one.
func (r *Runner) PlanFleet(ctx context.Context, fleetName string, k policy.Kind) (Reply, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	d, err := r.run(ctx, fleetName, k)
	if err != nil {
		return Reply{}, err
	}
	r.cancel(ctx, d)
	if d.Ended != nil && d.Ended.Rollout.FinishedAt != nil {
		enginetask.WritePassMetrics(r.Metrics, d.Ended.Before, d.Ended.Rollout, *d.Ended.Rollout.FinishedAt)
	}
	r.wakeEnded(ctx, d)
	return ReplyOf(d), r.start(ctx, d)
}

// run runs the planner, again when it lost a race.
func (r *Runner) run(ctx context.Context, fleetName string, k policy.Kind) (planner.Decision, error) {
	var d planner.Decision
	var err error
	for attempt := 0; attempt < planAttempts; attempt++ {
		if d, err = r.Planner.Run(ctx, fleetName, k); !errors.Is(err, rollout.ErrConflict) {
			break
		}
	}
	return d, err
}

// wakeEnded lets the execution of a rollout the run superseded or failed
// see its new status; parked, it would wait for an operator for ever.
func (r *Runner) wakeEnded(ctx context.Context, d planner.Decision) {
	if d.Ended == nil || d.Ended.Rollout.TaskToken == "" || r.SFN == nil {
		return
	}
	ro := d.Ended.Rollout
	execution.Waker{SFN: r.SFN, Tokens: r.Tokens, Log: r.Log}.Wake(ctx, ro.ID, ro.TaskToken, "the planner ended the rollout: "+string(ro.Status))
}

// start runs the state machine for a created rollout (execution.Starter).
func (r *Runner) start(ctx context.Context, d planner.Decision) error {
	if d.Created == nil || r.SFN == nil {
		return nil
	}
	return execution.Starter{SFN: r.SFN, StateMachineArn: r.StateMachineArn}.Start(ctx, d.Created.Rollout.ID)
}

// cancel withdraws the started updates of the targets a supersede
// cancelled; a failed Cancel is logged, since the target is ended anyway.
func (r *Runner) cancel(ctx context.Context, d planner.Decision) {
	orders := d.CancelOrders()
	if len(orders) == 0 {
		return
	}
	ro := d.Ended.Rollout
	ex, err := r.Executors.For(ro.Executor)
	if err != nil {
		r.logger().Warn("cancel superseded targets", "rollout", ro.ID, "error", err.Error())
		return
	}
	byAgent := map[string]rollout.Target{}
	for _, t := range d.Ended.Cancelled {
		byAgent[t.AgentID] = t
	}
	for _, o := range orders {
		if err := ex.Cancel(ctx, executor.Call{Rollout: ro, Target: byAgent[o.AgentID], Operation: executor.OpCancel}); err != nil {
			r.logger().Warn("executor cancel failed", "rollout", ro.ID, "agent", o.AgentID, "error", err.Error())
		}
	}
}

func (r *Runner) logger() *slog.Logger {
	if r.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return r.Log
}
