// Package setup wires the engine, the planner and the agent-event path from
// the environment, the same way in the Lambdas and in the local stack:
// DynamoDB, Step Functions and DynamoDB Streams clients honour the standard
// AWS_ENDPOINT_URL_* variables, so only the endpoints differ locally.
package setup

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/myriarch/myriarch/pkg/agentevent"
	"github.com/myriarch/myriarch/pkg/api"
	"github.com/myriarch/myriarch/pkg/enginetask"
	"github.com/myriarch/myriarch/pkg/executor"
	"github.com/myriarch/myriarch/pkg/planner"
	"github.com/myriarch/myriarch/pkg/store"
)

// Environment variables of the functions (infra/functions.go sets them).
const (
	EnvTablePrefix     = "MYRIARCH_TABLE_PREFIX"
	EnvStateMachineArn = "MYRIARCH_STATE_MACHINE_ARN"
	EnvServerTimezone  = "MYRIARCH_DEFAULT_TIMEZONE"
	EnvOfflineAfter    = "MYRIARCH_OFFLINE_AFTER" // default 90s: three gateway heartbeats
)

// Deps is everything the engine, the planner and the agent-event path need.
type Deps struct {
	AWS       aws.Config
	Store     *store.Store
	SFN       *sfn.Client
	Executors executor.Registry
	Clock     func() time.Time
	Log       *slog.Logger

	StateMachineArn string
	ServerTimezone  string
	OfflineAfter    time.Duration
}

// FromEnv builds Deps from the environment (getenv) and the AWS default
// configuration; clock is the wall clock in production.
func FromEnv(ctx context.Context, getenv func(string) string, clock func() time.Time, log *slog.Logger) (Deps, error) {
	prefix := getenv(EnvTablePrefix)
	if prefix == "" {
		return Deps{}, fmt.Errorf("%s is not set", EnvTablePrefix)
	}
	offline := 90 * time.Second
	if v := getenv(EnvOfflineAfter); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return Deps{}, fmt.Errorf("%s=%q is not a duration such as 90s", EnvOfflineAfter, v)
		}
		offline = d
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return Deps{}, fmt.Errorf("AWS configuration: %w", err)
	}
	st := store.New(dynamodb.NewFromConfig(cfg, localChecksums(getenv)), store.TablesWithPrefix(prefix))
	return Deps{
		AWS: cfg, Store: st, SFN: sfn.NewFromConfig(cfg), Clock: clock, Log: log,
		Executors:       executor.Registry{executor.Manual: executor.ManualExecutor{}, executor.Updater: executor.UpdaterExecutor{Offers: st}},
		StateMachineArn: getenv(EnvStateMachineArn), ServerTimezone: getenv(EnvServerTimezone), OfflineAfter: offline,
	}, nil
}

// Passer runs evaluation passes.
func (d Deps) Passer() enginetask.Passer {
	return enginetask.Passer{Store: d.Store, Executors: d.Executors, Clock: d.Clock, ServerTimezone: d.ServerTimezone,
		OfflineAfter: d.OfflineAfter, Log: d.Log}
}

// Engine serves the tasks of the rollout state machine.
func (d Deps) Engine() enginetask.Handler {
	return enginetask.Handler{Passer: d.Passer(), Tokens: d.Store, SFN: d.SFN, StateMachineArn: d.StateMachineArn}
}

// Planning runs the planner for a fleet and kind and starts the executions
// of the rollouts it creates.
func (d Deps) Planning(newID func() string) *api.LocalPlanning {
	return &api.LocalPlanning{Planner: planner.Planner{Store: d.Store, Clock: d.Clock, NewID: newID}, Executors: d.Executors,
		SFN: d.SFN, StateMachineArn: d.StateMachineArn, Tokens: d.Store, Log: d.Log}
}

// AgentEvents evaluates the rollouts that agent changes concern.
func (d Deps) AgentEvents() agentevent.Handler {
	return agentevent.Handler{Rollouts: d.Store, Passer: d.Passer(), Log: d.Log}
}

// localChecksums turns off response checksum validation against DynamoDB
// Local, which sends no x-amz-crc32 on error responses, so the SDK would log
// a warning for every lost race (aws-sdk-go-v2 #3545). In the cloud it stays on.
func localChecksums(getenv func(string) string) func(*dynamodb.Options) {
	return func(o *dynamodb.Options) {
		if getenv("AWS_ENDPOINT_URL_DYNAMODB") != "" {
			o.DisableValidateResponseChecksum = true
		}
	}
}
