package execution

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/aws/aws-sdk-go-v2/service/sfn/types"
)

// StartAPI is the part of the Step Functions API that starting needs.
type StartAPI interface {
	StartExecution(ctx context.Context, in *sfn.StartExecutionInput, opts ...func(*sfn.Options)) (*sfn.StartExecutionOutput, error)
}

// Input is the input of an execution: the rollout, and for a continued
// execution the wave and stage it is at (informative, for the console: the
// engine reads them from the rollout).
type Input struct {
	RolloutID string `json:"rolloutId"`
	Wave      string `json:"wave,omitempty"`
	Stage     string `json:"stage,omitempty"`
}

// Starter starts executions of the rollout state machine.
type Starter struct {
	SFN             StartAPI
	StateMachineArn string
}

// Start starts the first execution of a rollout created by the planner,
// named after it, so that a retried start starts nothing new.
func (s Starter) Start(ctx context.Context, rolloutID string) error {
	if _, err := s.start(ctx, Name(rolloutID, 1), Input{RolloutID: rolloutID}); err != nil {
		return fmt.Errorf("start the execution of rollout %s: %w", rolloutID, err)
	}
	return nil
}

// Continue starts the n-th execution of a rollout (continue-as-new). A
// retried continue that finds the execution of that name started, even
// with another input (the stage moved on in between), has nothing left to
// do.
func (s Starter) Continue(ctx context.Context, in Input, n int) error {
	_, err := s.start(ctx, Name(in.RolloutID, n), in)
	var exists *types.ExecutionAlreadyExists
	if errors.As(err, &exists) {
		return nil
	}
	return err
}

// maxNames bounds the names Restart tries: a name is taken only by an
// execution that started and ended without recording itself.
const maxNames = 5

// Restart starts a new execution for a rollout whose execution is missing
// or ended (the watchdog), named as Continue names the next one after the
// executions recorded, so that two watchdogs (or a watchdog and a late
// continue) start it once. It returns the execution's ARN.
func (s Starter) Restart(ctx context.Context, rolloutID string, executions int) (string, error) {
	var last error
	for n := executions + 1; n <= executions+maxNames; n++ {
		out, err := s.start(ctx, Name(rolloutID, n), Input{RolloutID: rolloutID})
		var taken *types.ExecutionAlreadyExists
		if errors.As(err, &taken) {
			last = err
			continue
		}
		if err != nil {
			return "", err
		}
		return aws.ToString(out.ExecutionArn), nil
	}
	return "", last
}

func (s Starter) start(ctx context.Context, name string, in Input) (*sfn.StartExecutionOutput, error) {
	input, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	return s.SFN.StartExecution(ctx, &sfn.StartExecutionInput{
		StateMachineArn: aws.String(s.StateMachineArn), Name: aws.String(name), Input: aws.String(string(input)),
	})
}
