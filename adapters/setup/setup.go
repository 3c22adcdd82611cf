// Package setup wires the engine, the planner and the agent-event path from
// the environment, the same way in the Lambdas and in the local stack:
// DynamoDB, Step Functions and DynamoDB Streams clients honour the standard
// AWS_ENDPOINT_URL_* variables, so only the endpoints differ locally.
package setup

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/sfn"

	"github.com/myriarch/myriarch/adapters/agentevent"
	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/executor/awx"
	"github.com/myriarch/myriarch/adapters/executor/httpcall"
	"github.com/myriarch/myriarch/adapters/executor/secrets"
	"github.com/myriarch/myriarch/adapters/executor/webhook"
	"github.com/myriarch/myriarch/adapters/gate/gateread"
	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/adapters/watchdog"
	"github.com/myriarch/myriarch/core/agent"
	"github.com/myriarch/myriarch/core/assignment"
	"github.com/myriarch/myriarch/core/executor"
	"github.com/myriarch/myriarch/core/executorobject"
	"github.com/myriarch/myriarch/core/planner"
)

// Environment variables of the functions (infra/functions.go sets them).
const (
	EnvTablePrefix     = "MYRIARCH_TABLE_PREFIX"
	EnvStateMachineArn = "MYRIARCH_STATE_MACHINE_ARN"
	EnvServerTimezone  = "MYRIARCH_DEFAULT_TIMEZONE"
	EnvOfflineAfter    = "MYRIARCH_OFFLINE_AFTER"   // a duration, default 90s: three gateway heartbeats
	EnvReconnectGrace  = "MYRIARCH_RECONNECT_GRACE" // default 10s: a closed connection still counts as online
	EnvAgentRetention  = "MYRIARCH_AGENT_RETENTION" // default 168h: offline longer, an agent is gone
)

// Defaults of the liveness rule of rollouts, durations all (the gateway's
// -offline-after counts heartbeats instead: 3 × 30 s is DefaultOfflineAfter).
const (
	DefaultOfflineAfter   = 90 * time.Second
	DefaultReconnectGrace = 10 * time.Second
	DefaultAgentRetention = 7 * 24 * time.Hour
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
	Liveness        agent.Liveness
	// Metrics receives embedded-metric-format records (the Lambdas: stdout).
	Metrics io.Writer
	// Gates reads the health gates (gateread.FromEnv).
	Gates enginetask.GateReader
}

// FromEnv builds Deps from the environment (getenv) and the AWS default
// configuration; clock is the wall clock in production.
func FromEnv(ctx context.Context, getenv func(string) string, clock func() time.Time, log *slog.Logger) (Deps, error) {
	prefix := getenv(EnvTablePrefix)
	if prefix == "" {
		return Deps{}, fmt.Errorf("%s is not set", EnvTablePrefix)
	}
	live, err := LivenessFromEnv(getenv)
	if err != nil {
		return Deps{}, err
	}
	cfg, err := store.AWSConfig(ctx, getenv)
	if err != nil {
		return Deps{}, fmt.Errorf("AWS configuration: %w", err)
	}
	st := store.New(dynamodb.NewFromConfig(cfg, localChecksums(getenv)), store.TablesWithPrefix(prefix))
	live.Source = Leases(st, clock)
	gates, err := gateread.FromEnv(getenv, &cfg, clock, log)
	if err != nil {
		return Deps{}, err
	}
	return Deps{
		AWS: cfg, Store: st, SFN: sfn.NewFromConfig(cfg), Clock: clock, Log: log, Gates: gates,
		Executors:       Executors(getenv, cfg, st, clock, log),
		StateMachineArn: getenv(EnvStateMachineArn), ServerTimezone: getenv(EnvServerTimezone), Liveness: live,
	}, nil
}

// Executors are the executors of a deployment: manual, updater (offers
// through the store) and webhook, whose secrets come from Secrets Manager
// when MYRIARCH_SECRETS_PREFIX is set (the cloud), else from the
// environment and MYRIARCH_SECRETS_DIR (secrets.FromEnv).
func Executors(getenv func(string) string, cfg aws.Config, offers executor.Offers, clock func() time.Time, log *slog.Logger) executor.Registry {
	keys := secrets.FromEnv(getenv, cfg, clock) // one source, so its cache serves both
	return executor.Registry{
		executor.Manual:            executor.ManualExecutor{},
		executor.Updater:           executor.UpdaterExecutor{Offers: offers, Updaters: linkedUpdaters(offers)},
		executorobject.TypeWebhook: webhook.Executor{HTTP: &http.Client{}, Secrets: keys, Now: clock, Sleep: httpcall.Wait, Log: log},
		executorobject.TypeAWX:     awx.Executor{Secrets: keys, Now: clock, Sleep: httpcall.Wait, Log: log},
	}
}

// LeaseCacheTTL is how long a reader uses the gateway leases it read: far
// below the liveness timeout, so a dead task's agents go offline at most
// that much late, and one lease read serves the many requests and evaluations
// of those seconds.
const LeaseCacheTTL = 2 * time.Second

// Leases is the lease source of readers (Liveness.Source): the store's
// leases, cached for LeaseCacheTTL.
func Leases(st *store.Store, clock func() time.Time) agent.LeaseSource {
	return agent.CachedLeases(st, LeaseCacheTTL, clock)
}

// LivenessFromEnv reads the liveness rule of rollouts: how long an agent of
// a record without a gateway task may stay silent ([EnvOfflineAfter], 90s;
// records with a task are judged by its lease, Deps.Liveness.Source) and how long a closed connection
// still counts as online ([EnvReconnectGrace], 10s) and after how long
// offline an agent is gone ([EnvAgentRetention], 7 days).
func LivenessFromEnv(getenv func(string) string) (agent.Liveness, error) {
	l := agent.Liveness{Silence: DefaultOfflineAfter, ReconnectGrace: DefaultReconnectGrace, Retention: DefaultAgentRetention}
	for _, v := range []struct {
		env string
		d   *time.Duration
	}{{EnvOfflineAfter, &l.Silence}, {EnvReconnectGrace, &l.ReconnectGrace}, {EnvAgentRetention, &l.Retention}} {
		s := getenv(v.env)
		if s == "" {
			continue
		}
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return agent.Liveness{}, fmt.Errorf("%s=%q is not a duration such as 90s", v.env, s)
		}
		*v.d = d
	}
	return l, nil
}

// Evaluator runs evaluations.
func (d Deps) Evaluator() enginetask.Evaluator {
	return enginetask.Evaluator{Store: d.Store, Executors: d.Executors, Clock: d.Clock, ServerTimezone: d.ServerTimezone,
		Liveness: d.Liveness, Metrics: d.Metrics, Gates: d.Gates, Audit: d.Store, Updaters: d.Store, Log: d.Log}
}

// Engine serves the tasks of the rollout state machine.
func (d Deps) Engine() enginetask.Handler {
	return enginetask.Handler{Evaluator: d.Evaluator(), Tokens: d.Store, SFN: d.SFN, StateMachineArn: d.StateMachineArn}
}

// Planning runs the planner for a fleet and kind and starts the executions
// of the rollouts it creates.
func (d Deps) Planning(newID func() string) *plannertask.Runner {
	return &plannertask.Runner{Planner: planner.Planner{Store: d.Store, Clock: d.Clock, NewID: newID, Liveness: d.Liveness}, Executors: d.Executors,
		SFN: d.SFN, StateMachineArn: d.StateMachineArn, Tokens: d.Store, Log: d.Log, Metrics: d.Metrics}
}

// AgentEvents assigns agents as they report, has planning plan the fleets
// they joined or left, and evaluates the rollouts that agent changes
// concern.
func (d Deps) AgentEvents(planning agentevent.FleetPlanner) agentevent.Handler {
	return agentevent.Handler{Rollouts: d.Store, Evaluator: d.Evaluator(), Assigner: d.Assigner(), Planner: planning, Collectors: d.Store, Log: d.Log}
}

// Assigner assigns agents to the fleets of the applied revision.
func (d Deps) Assigner() assignment.Runner {
	return assignment.Runner{Store: d.Store, Log: d.Log, Clock: d.Clock}
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

// Watchdog checks that every active rollout has a running execution.
func (d Deps) Watchdog() watchdog.Watchdog {
	return watchdog.Watchdog{Store: d.Store, SFN: d.SFN, StateMachineArn: d.StateMachineArn, Clock: d.Clock, Log: d.Log}
}

// linkedUpdaters is the store's lookup of myriarch-updaters when the offers
// go to a store that has one (adapters/store), else nil.
func linkedUpdaters(offers executor.Offers) executor.LinkedUpdaters {
	l, _ := offers.(executor.LinkedUpdaters)
	return l
}
