// Command watchdog is the watchdog Lambda. An EventBridge schedule invokes
// it every few minutes: it starts a new execution for every active rollout
// whose execution is missing or ended (adapters/watchdog), and writes the
// metrics RolloutsResumed and OldestApprovalWaitSeconds (namespace
// Myriarch, dimension Stage) that the deployment's alarms read.
//
// Environment: MYRIARCH_TABLE_PREFIX, MYRIARCH_STATE_MACHINE_ARN,
// MYRIARCH_STAGE (the metrics' dimension).
package main

import (
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/myriarch/myriarch/adapters/setup"
	"github.com/myriarch/myriarch/adapters/watchdog"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	clock := func() time.Time { return time.Now().UTC() }
	d, err := setup.FromEnv(context.Background(), os.Getenv, clock, log)
	if err != nil {
		log.Error("watchdog: start", "error", err.Error())
		os.Exit(1)
	}
	w := d.Watchdog()
	stage := os.Getenv(watchdog.EnvStage)
	lambda.Start(func(ctx context.Context, _ json.RawMessage) (any, error) {
		rep, err := w.Run(ctx)
		// The metrics go out even when a rollout could not be checked: the
		// others were, and a silent watchdog would hide a stranded rollout.
		if werr := rep.WriteMetrics(os.Stdout, stage, clock()); werr != nil {
			log.Error("watchdog: metrics", "error", werr.Error())
		}
		return rep, err
	})
}
