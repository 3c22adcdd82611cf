package main

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

// invoker is the part of the Lambda API the planning uses.
type invoker interface {
	Invoke(ctx context.Context, in *awslambda.InvokeInput, opts ...func(*awslambda.Options)) (*awslambda.InvokeOutput, error)
}

// queuePlanning asks the planner Lambda, the single writer of rollouts, to
// plan a fleet that agents joined or left, without waiting for it: an
// asynchronous invocation is queued by Lambda and retried when the
// planner (reserved concurrency 1) is busy, so a connect storm does not
// fail stream batches. The decision is the planner's; nothing comes back.
type queuePlanning struct {
	client   invoker
	function string
}

func (p queuePlanning) PlanFleet(ctx context.Context, fleet string, k policy.Kind) (planner.Decision, error) {
	payload, _ := json.Marshal(api.PlanRequest{Fleet: fleet, Kind: k})
	_, err := p.client.Invoke(ctx, &awslambda.InvokeInput{FunctionName: aws.String(p.function), Payload: payload,
		InvocationType: lambdatypes.InvocationTypeEvent})
	if err != nil {
		return planner.Decision{}, fmt.Errorf("queue a plan of fleet %s (%s) with %s: %w", fleet, k, p.function, err)
	}
	return planner.Decision{Note: "queued"}, nil
}
