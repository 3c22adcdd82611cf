// Command engine is the engine Lambda: every task of the rollout state
// machine (statemachines/rollout.asl.json), chosen by the "task" field of
// the payload. Errors keep their Go type name as the Lambda error type, so
// the state machine's Retry matches RetryableError and its Catch the rest.
//
// Environment: MYRIARCH_TABLE_PREFIX, MYRIARCH_STATE_MACHINE_ARN (to continue
// a long rollout as a new execution), MYRIARCH_DEFAULT_TIMEZONE,
// MYRIARCH_OFFLINE_AFTER, MYRIARCH_SECRETS_PREFIX (the Secrets Manager names
// of the executors' secrets).
package main

import (
	"context"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/setup"
)

func main() {
	enginetask.SetGC() // for the evaluations of whole rollouts, within GOMEMLIMIT
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	d, err := setup.FromEnv(context.Background(), os.Getenv, func() time.Time { return time.Now().UTC() }, log)
	if err != nil {
		log.Error("engine: start", "error", err.Error())
		os.Exit(1)
	}
	d.Metrics = os.Stdout // embedded metric format: CloudWatch Logs makes the records metrics
	lambda.Start(d.Engine().Handle)
}
