// Package plannerlambda is how the api and agent-event functions reach the
// planner Lambda, the single writer of rollouts. It is not in pkg/setup,
// which the CDK app imports for the functions' settings: the CDK module need
// not carry the Lambda client.
package plannerlambda

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	lambdatypes "github.com/aws/aws-sdk-go-v2/service/lambda/types"

	"github.com/myriarch/myriarch/pkg/api"
	"github.com/myriarch/myriarch/pkg/planner"
	"github.com/myriarch/myriarch/pkg/policy"
)

// Invoker is the part of the Lambda API that planning through the planner
// function calls.
type Invoker interface {
	Invoke(ctx context.Context, in *awslambda.InvokeInput, opts ...func(*awslambda.Options)) (*awslambda.InvokeOutput, error)
}

// LambdaPlanning plans through the planner Lambda, the single writer of
// rollouts: an api.PlanRequest in. Synchronously (the api, which answers
// with the plan) an api.PlanReply comes back; with Async (the agent-event
// function) Lambda queues the invocation and retries it while the planner
// (reserved concurrency 1) is busy, so that a connect storm does not fail
// stream batches, and nothing comes back.
type LambdaPlanning struct {
	Client   Invoker
	Function string
	Async    bool
}

func (p LambdaPlanning) PlanFleet(ctx context.Context, fleet string, k policy.Kind) (planner.Decision, error) {
	payload, _ := json.Marshal(api.PlanRequest{Fleet: fleet, Kind: k})
	in := &awslambda.InvokeInput{FunctionName: aws.String(p.Function), Payload: payload}
	if p.Async {
		in.InvocationType = lambdatypes.InvocationTypeEvent
	}
	out, err := p.Client.Invoke(ctx, in)
	switch {
	case err != nil:
		return planner.Decision{}, fmt.Errorf("invoke the planner %s: %w", p.Function, err)
	case p.Async:
		return planner.Decision{Note: "queued"}, nil
	case out.FunctionError != nil:
		return planner.Decision{}, fmt.Errorf("the planner %s failed (%s): %s", p.Function, *out.FunctionError, out.Payload)
	}
	var reply api.PlanReply
	if err := json.Unmarshal(out.Payload, &reply); err != nil {
		return planner.Decision{}, fmt.Errorf("the planner %s answered %q: %w", p.Function, out.Payload, err)
	}
	return reply.Decision(), nil
}
