package execution

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"

	"github.com/myriarch/myriarch/core/rollout"
)

// TaskAPI is the part of the Step Functions API that waking needs.
type TaskAPI interface {
	SendTaskSuccess(ctx context.Context, in *sfn.SendTaskSuccessInput, opts ...func(*sfn.Options)) (*sfn.SendTaskSuccessOutput, error)
}

// StepFunctions is what starts and wakes executions both need (the engine
// tasks: a park wakes itself, a continue starts the next execution).
type StepFunctions interface {
	TaskAPI
	StartAPI
}

// Tokens is what waking needs of the store: the rollout with its stored
// token, and clearing that token only while it is still the stored one.
type Tokens interface {
	GetRollout(ctx context.Context, id string) (rollout.Rollout, error)
	ClearTaskToken(ctx context.Context, rolloutID, token string) error
}

// Waker wakes executions parked on a task token stored on their rollout.
type Waker struct {
	SFN TaskAPI
	// Tokens clears the token after its wake; nil clears none.
	Tokens Tokens
	Log    *slog.Logger
}

// WakeRollout wakes the execution of a rollout after an operator action
// changed it: it reads the rollout again and, when the rollout stores a
// token, wakes it (Wake). The re-read sees a token stored before the
// action's save; a park that comes later finds the status moved on and
// wakes itself (SendSuccess). It returns the rollout as read, without the
// token if the token was cleared; the error is only the read's.
func (w Waker) WakeRollout(ctx context.Context, rolloutID, why string) (rollout.Rollout, error) {
	r, err := w.Tokens.GetRollout(ctx, rolloutID)
	if err != nil || r.TaskToken == "" {
		return r, err
	}
	if w.Wake(ctx, r.ID, r.TaskToken, why) {
		r.TaskToken = ""
	}
	return r, nil
}

// Wake sends task success to token, which rollout rolloutID stores, and
// clears the stored token while it is still token. It reports whether the
// token no longer parks anything (woken now, or Gone). A wake that fails
// otherwise is logged and keeps the token: the next action wakes it. A
// failed clear is logged; the token it leaves is Gone for the next wake.
func (w Waker) Wake(ctx context.Context, rolloutID, token, why string) bool {
	if err := SendSuccess(ctx, w.SFN, token, why); err != nil && !Gone(err) {
		w.logger().ErrorContext(ctx, "wake a parked execution", "rollout", rolloutID, "error", err.Error())
		return false
	}
	if w.Tokens == nil {
		return true
	}
	if err := w.Tokens.ClearTaskToken(ctx, rolloutID, token); err != nil {
		w.logger().ErrorContext(ctx, "clear the task token", "rollout", rolloutID, "error", err.Error())
	}
	return true
}

// SendSuccess resumes the execution parked on token; its output says why.
// It touches no store: the park task that wakes itself calls it.
func SendSuccess(ctx context.Context, s TaskAPI, token, why string) error {
	out, _ := json.Marshal(map[string]string{"resumedBecause": why})
	_, err := s.SendTaskSuccess(ctx, &sfn.SendTaskSuccessInput{TaskToken: aws.String(token), Output: aws.String(string(out))})
	return err
}

// Gone reports whether err says that a token no longer parks anything, so
// that no retry of the wake could succeed and the stored token is cleared:
//   - TaskDoesNotExist: the execution ended, or the task was answered
//     (another wake won);
//   - TaskTimedOut: the park's timeout fired; the execution went on;
//   - InvalidToken: Step Functions cannot decode the token (a stored token
//     that was corrupted): no retry could wake anything through it, and
//     kept it would fail every later wake of the rollout.
//
// Throttling, network and permission errors are not Gone: the token may
// still park a live execution.
func Gone(err error) bool {
	var missing *types.TaskDoesNotExist
	var timedOut *types.TaskTimedOut
	var invalid *types.InvalidToken
	return errors.As(err, &missing) || errors.As(err, &timedOut) || errors.As(err, &invalid)
}

func (w Waker) logger() *slog.Logger {
	if w.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return w.Log
}
