// Command agent-event is the Lambda on the DynamoDB stream of the agents
// table: an agent that is new or whose attributes changed is assigned to
// its fleet (and the planner is asked to plan the fleets it joined or
// left), and every agent change that can move a target (not a heartbeat)
// evaluates the active rollouts of the agent's fleet at once. A failed
// batch returns an error, and the event source delivers it again.
//
// Environment: MYRIARCH_TABLE_PREFIX, MYRIARCH_PLANNER_FUNCTION,
// MYRIARCH_DEFAULT_TIMEZONE, MYRIARCH_OFFLINE_AFTER, MYRIARCH_RECONNECT_GRACE,
// MYRIARCH_SECRETS_PREFIX (its passes start targets through webhooks).
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/events"
	"github.com/aws/aws-lambda-go/lambda"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"

	"github.com/myriarch/myriarch/adapters/agentevent"
	"github.com/myriarch/myriarch/adapters/plannertask/remote"
	"github.com/myriarch/myriarch/adapters/setup"
	"github.com/myriarch/myriarch/adapters/store"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	d, err := setup.FromEnv(context.Background(), os.Getenv, func() time.Time { return time.Now().UTC() }, log)
	if err != nil {
		log.Error("agent-event: start", "error", err.Error())
		os.Exit(1)
	}
	d.Metrics = os.Stdout // embedded metric format: CloudWatch Logs makes the records metrics
	h := d.AgentEvents(remote.Lambda{Client: awslambda.NewFromConfig(d.AWS), Function: os.Getenv("MYRIARCH_PLANNER_FUNCTION"), Async: true})
	lambda.Start(func(ctx context.Context, ev events.DynamoDBEvent) error {
		changes, err := agentevent.FromLambdaEvent(store.DecodeAgentImage, ev)
		if err != nil {
			return err
		}
		return h.Handle(ctx, changes)
	})
}
