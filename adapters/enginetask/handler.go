package enginetask

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/myriarch/myriarch/adapters/execution"
	"github.com/myriarch/myriarch/core/rollout"
	"github.com/myriarch/myriarch/core/route"
)

// Tokens is what parking needs of the store: store the execution's token
// on the rollout only while the rollout is still in the status the evaluation saw
// (parkedAs). stored is false when the status moved on meanwhile.
type Tokens interface {
	ParkToken(ctx context.Context, rolloutID, token string, parkedAs rollout.Status) (stored bool, err error)
	// ClearTaskToken removes token only while it is still the stored one: a
	// token the execution stored since (it parked again) must survive.
	ClearTaskToken(ctx context.Context, rolloutID, token string) error
	SetExecution(ctx context.Context, rolloutID, executionArn string, executions int) error
	// RecordFailure makes the rollout failed at time at (with the event
	// rollout.failed) unless it is final; it returns the status afterwards.
	RecordFailure(ctx context.Context, rolloutID, reason string, at time.Time) (rollout.Status, error)
}

// Handler serves every task of the rollout state machine.
type Handler struct {
	Evaluator
	Tokens          Tokens
	SFN             execution.StepFunctions
	StateMachineArn string
	// ContinueAfter is the number of evaluations after which an execution
	// continues as a new one (0: MaxIterations).
	ContinueAfter int
}

// Handle dispatches a task. Every task is idempotent: Step Functions may
// run it twice, and the second run changes nothing the first did not.
func (h Handler) Handle(ctx context.Context, in Input) (Output, error) {
	switch in.Task {
	case TaskPrepare:
		return h.prepare(ctx, in)
	case TaskEvaluate:
		return h.evaluate(ctx, in)
	case TaskPark:
		return h.park(ctx, in)
	case TaskContinue:
		return h.continueAsNew(ctx, in)
	case TaskFinish:
		return h.finish(ctx, in)
	case TaskRecordFailure:
		return h.recordFailure(ctx, in)
	case TaskReadGates:
		return h.readGates(ctx, in)
	}
	return Output{}, &TerminalError{Err: fmt.Errorf("unknown task %q", in.Task)}
}

func (h Handler) prepare(ctx context.Context, in Input) (Output, error) {
	r, err := h.Store.GetRollout(ctx, in.RolloutID)
	if err != nil {
		return Output{}, classify("prepare rollout "+in.RolloutID, err)
	}
	if r.ExecutionArn != in.ExecutionArn {
		if err := h.Tokens.SetExecution(ctx, r.ID, in.ExecutionArn, r.Executions+1); err != nil {
			return Output{}, classify("record execution", err)
		}
	}
	return Output{RolloutID: r.ID, Iteration: 0, Verdict: "prepared", Status: string(r.Status), Wave: currentWave(r), Stage: currentStage(r)}, nil
}

func (h Handler) evaluate(ctx context.Context, in Input) (Output, error) {
	res, err := h.EvaluateWatching(ctx, in.RolloutID)
	if err != nil {
		return Output{}, classify("evaluate rollout "+in.RolloutID, err)
	}
	return Verdict(res, in.Iteration+1, h.ContinueAfter, h.Clock().UTC()), nil
}

// readGates takes the readings that are due and records them; the next
// evaluation judges them.
func (h Handler) readGates(ctx context.Context, in Input) (Output, error) {
	shown, err := h.ReadGates(ctx, in.RolloutID)
	if err != nil {
		return Output{}, classify("read gates of rollout "+in.RolloutID, err)
	}
	return Output{RolloutID: in.RolloutID, Iteration: in.Iteration, Verdict: string(route.ReadGates), Gates: shown}, nil
}

// park stores the task token so that an operator action can wake the
// execution. If the rollout left the parked status before the token was
// stored, the action could not see the token: park wakes the execution itself.
func (h Handler) park(ctx context.Context, in Input) (Output, error) {
	stored, err := h.Tokens.ParkToken(ctx, in.RolloutID, in.TaskToken, rollout.Status(in.ParkedAs))
	if err != nil {
		return Output{}, classify("park rollout "+in.RolloutID, err)
	}
	if !stored {
		if err := execution.SendSuccess(ctx, h.SFN, in.TaskToken, "the rollout moved on while it parked"); err != nil {
			return Output{}, classify("wake rollout "+in.RolloutID, err)
		}
	}
	return Output{RolloutID: in.RolloutID, Iteration: in.Iteration, Verdict: "parked", Status: in.ParkedAs}, nil
}

// continueAsNew starts the next execution of the rollout, whose input
// names the stage (and wave) the rollout is at, for the console.
// StartExecution is idempotent by name and input, so a retried task starts
// it only once; a retry that finds the execution of that name started with
// another input (the stage moved on in between) has nothing left to do.
func (h Handler) continueAsNew(ctx context.Context, in Input) (Output, error) {
	r, err := h.Store.GetRollout(ctx, in.RolloutID)
	if err != nil {
		return Output{}, classify("continue rollout "+in.RolloutID, err)
	}
	n := r.Executions + 1
	if r.ExecutionArn != in.ExecutionArn {
		n = r.Executions // a retry: the next execution was already recorded
	}
	out := Output{RolloutID: r.ID, Iteration: in.Iteration, Verdict: string(route.Continue), Status: string(r.Status), Wave: currentWave(r), Stage: currentStage(r)}
	next := execution.Input{RolloutID: r.ID, Wave: out.Wave, Stage: out.Stage}
	if err := (execution.Starter{SFN: h.SFN, StateMachineArn: h.StateMachineArn}).Continue(ctx, next, n); err != nil {
		return Output{}, classify("start the next execution of "+r.ID, err)
	}
	return out, nil
}

func (h Handler) finish(ctx context.Context, in Input) (Output, error) {
	r, err := h.Store.GetRollout(ctx, in.RolloutID)
	if err != nil {
		return Output{}, classify("finish rollout "+in.RolloutID, err)
	}
	if r.TaskToken != "" {
		if err := h.Tokens.ClearTaskToken(ctx, r.ID, r.TaskToken); err != nil {
			return Output{}, classify("clear token", err)
		}
	}
	h.logger().Info("rollout finished", "rollout", r.ID, "fleet", r.Fleet, "kind", string(r.Kind), "status", string(r.Status),
		"duration", durationOf(r))
	return Output{RolloutID: r.ID, Iteration: in.Iteration, Verdict: string(route.Done), Status: string(r.Status), Reason: r.StatusReason}, nil
}

func durationOf(r rollout.Rollout) string {
	if r.StartedAt == nil || r.FinishedAt == nil {
		return ""
	}
	return r.FinishedAt.Sub(*r.StartedAt).Round(time.Second).String()
}

// recordFailure makes the rollout failed with the cause of the engine error,
// so that a person sees it and decides; a final rollout stays as it is.
func (h Handler) recordFailure(ctx context.Context, in Input) (Output, error) {
	var caught struct{ Error, Cause string }
	_ = json.Unmarshal(in.Error, &caught)
	reason := fmt.Sprintf("engine error %s: %s", caught.Error, caught.Cause)
	st, err := h.Tokens.RecordFailure(ctx, in.RolloutID, reason, h.Clock().UTC())
	if err != nil {
		return Output{}, classify("record failure of "+in.RolloutID, err)
	}
	v := string(route.Failed)
	if st.Final() {
		v = string(route.Done)
	}
	return Output{RolloutID: in.RolloutID, Iteration: in.Iteration, Verdict: v, Status: string(st), Reason: reason}, nil
}
