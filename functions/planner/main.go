// Command planner is the planner Lambda, the single writer of rollouts
// (reserved concurrency 1). The EventBridge schedule invokes it every
// minute to plan every fleet; the api invokes it synchronously with a
// plannertask.Request {"fleet", "kind"} to plan one fleet now and answers
// with a plannertask.Reply (plannertask.Runner). A rollout it creates starts
// its execution, named after it.
//
// Environment: MYRIARCH_TABLE_PREFIX, MYRIARCH_STATE_MACHINE_ARN,
// MYRIARCH_SECRETS_PREFIX (a supersede cancels through a webhook).
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"time"

	"github.com/aws/aws-lambda-go/lambda"

	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/adapters/setup"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	d, err := setup.FromEnv(context.Background(), os.Getenv, func() time.Time { return time.Now().UTC() }, log)
	if err != nil {
		log.Error("planner: start", "error", err.Error())
		os.Exit(1)
	}
	d.Metrics = os.Stdout // embedded metric format: the passes a supersede ended
	planning := d.Planning(newID)
	lambda.Start(func(ctx context.Context, payload json.RawMessage) (any, error) {
		var req plannertask.Request
		if err := json.Unmarshal(payload, &req); err == nil && req.Fleet != "" {
			return planning.PlanFleet(ctx, req.Fleet, req.Kind)
		}
		runs, err := d.Tick(ctx, planning)
		log.Info("scheduled planner run", "runs", runs, "ok", err == nil)
		return map[string]int{"runs": runs}, err
	})
}

// newID is a rollout id: time-ordered, then random, so listings sort well
// and ids never collide.
func newID() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("r-%s-%s", time.Now().UTC().Format("20060102t150405"), hex.EncodeToString(b[:]))
}
