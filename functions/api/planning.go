package main

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/myriarch/myriarch/pkg/api"
	"github.com/myriarch/myriarch/pkg/planner"
	"github.com/myriarch/myriarch/pkg/policy"
)

// invoker is the part of the Lambda API the planning calls.
type invoker interface {
	Invoke(ctx context.Context, in *awslambda.InvokeInput, opts ...func(*awslambda.Options)) (*awslambda.InvokeOutput, error)
}

// invokePlanning plans through the planner Lambda, the single writer of
// rollouts, synchronously: an api.PlanRequest in, an api.PlanReply out.
type invokePlanning struct {
	client   invoker
	function string
}

func (p invokePlanning) PlanFleet(ctx context.Context, fleet string, k policy.Kind) (planner.Decision, error) {
	payload, _ := json.Marshal(api.PlanRequest{Fleet: fleet, Kind: k})
	out, err := p.client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String(p.function), Payload: payload})
	if err != nil {
		return planner.Decision{}, fmt.Errorf("invoke the planner %s: %w", p.function, err)
	}
	if out.FunctionError != nil {
		return planner.Decision{}, fmt.Errorf("the planner %s failed (%s): %s", p.function, *out.FunctionError, out.Payload)
	}
	var reply api.PlanReply
	if err := json.Unmarshal(out.Payload, &reply); err != nil {
		return planner.Decision{}, fmt.Errorf("the planner %s answered %q: %w", p.function, out.Payload, err)
	}
	return reply.Decision(), nil
}
