// Package remote is how the api and agent-event functions reach the
// planner Lambda, the single writer of rollouts: plannertask's wire over
// Lambda Invoke. It is apart from plannertask, which adapters/setup (and so the
// CDK app, for the functions' settings) imports: the CDK module need not
// carry the Lambda client.
package remote

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/core/policy"
)

// Invoker is the part of the Lambda API that planning through the planner
// function calls.
type Invoker interface {
	Invoke(ctx context.Context, in *awslambda.InvokeInput, opts ...func(*awslambda.Options)) (*awslambda.InvokeOutput, error)
}

// Lambda plans through the planner Lambda: a plannertask.Request in.
// Synchronously (the api, which answers with the plan) a plannertask.Reply
// comes back; with Async (the agent-event function) Lambda queues the
// invocation and retries it while the planner (reserved concurrency 1) is
// busy, so that a connect storm does not fail stream batches, and the reply
// is only the note "queued".
type Lambda struct {
	Client   Invoker
	Function string
	Async    bool
}

// PlanFleet invokes the planner function for one fleet and kind.
func (p Lambda) PlanFleet(ctx context.Context, fleet string, k policy.Kind) (plannertask.Reply, error) {
	payload, _ := json.Marshal(plannertask.Request{Fleet: fleet, Kind: k})
	in := &awslambda.InvokeInput{FunctionName: aws.String(p.Function), Payload: payload}
	if p.Async {
		in.InvocationType = lambdatypes.InvocationTypeEvent
	}
	out, err := p.Client.Invoke(ctx, in)
	switch {
	case err != nil:
		return plannertask.Reply{}, fmt.Errorf("invoke the planner %s: %w", p.Function, err)
	case p.Async:
		return plannertask.Reply{Note: "queued"}, nil
	case out.FunctionError != nil:
		return plannertask.Reply{}, fmt.Errorf("the planner %s failed (%s): %s", p.Function, *out.FunctionError, out.Payload)
	}
	var reply plannertask.Reply
	if err := json.Unmarshal(out.Payload, &reply); err != nil {
		return plannertask.Reply{}, fmt.Errorf("the planner %s answered %q: %w", p.Function, out.Payload, err)
	}
	return reply, nil
}
