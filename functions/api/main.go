// Command api is the api Lambda: the REST API of adapters/api behind API
// Gateway's REST proxy, through the proxy adapter. The token authorizer in
// front of it establishes the caller; this function trusts the principal
// the authorizer passes in the request context and, without one, checks
// the bearer token itself (the same check).
//
// Environment:
//
//	MYRIARCH_TABLE_PREFIX        the tables' prefix (required)
//	MYRIARCH_PLANNER_FUNCTION    the planner Lambda, invoked to plan a fleet now (required in the cloud)
//	MYRIARCH_STATE_MACHINE_ARN   the rollout state machine, only when planning in-process
//	MYRIARCH_TOKENS, MYRIARCH_TOKENS_FILE   API tokens (display names; the check without an authorizer)
//	MYRIARCH_RELEASES            comma-separated configured collector releases, merged into the stored
//	                             catalogue of every distribution with source config (never written)
//	MYRIARCH_PLATFORMS           comma-separated platforms of those releases
//	MYRIARCH_OFFLINE_AFTER, MYRIARCH_RECONNECT_GRACE, MYRIARCH_AGENT_RETENTION   the liveness rule (adapters/setup)
//	MYRIARCH_SECRETS_PREFIX      Secrets Manager names of the executors' secrets (an abort cancels through a webhook)
//	AWS_ENDPOINT_URL_DYNAMODB, AWS_ENDPOINT_URL_SFN, AWS_ENDPOINT_URL_LAMBDA   local endpoints
package main

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/aws/aws-lambda-go/lambda"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	awslambda "github.com/aws/aws-sdk-go-v2/service/lambda"
	"github.com/aws/aws-sdk-go-v2/service/sfn"
	"github.com/awslabs/aws-lambda-go-api-proxy/core"
	"github.com/awslabs/aws-lambda-go-api-proxy/httpadapter"

	"github.com/myriarch/myriarch/adapters/api"
	"github.com/myriarch/myriarch/adapters/enginetask"
	"github.com/myriarch/myriarch/adapters/plannertask"
	"github.com/myriarch/myriarch/adapters/plannertask/remote"
	"github.com/myriarch/myriarch/adapters/setup"
	"github.com/myriarch/myriarch/adapters/store"
	"github.com/myriarch/myriarch/core/planner"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stderr, nil))
	h, err := build(context.Background(), os.Getenv, log)
	if err != nil {
		log.Error("api: start", "error", err.Error())
		os.Exit(1)
	}
	lambda.Start(httpadapter.New(h).ProxyWithContext)
}

// build wires the handler from the environment.
func build(ctx context.Context, getenv func(string) string, log *slog.Logger) (http.Handler, error) {
	prefix := getenv("MYRIARCH_TABLE_PREFIX")
	if prefix == "" {
		return nil, fmt.Errorf("MYRIARCH_TABLE_PREFIX is not set")
	}
	live, err := setup.LivenessFromEnv(getenv)
	if err != nil {
		return nil, err
	}
	cfg, err := config.LoadDefaultConfig(ctx)
	if err != nil {
		return nil, fmt.Errorf("AWS configuration: %w", err)
	}
	st := store.New(dynamodb.NewFromConfig(cfg), store.TablesWithPrefix(prefix))
	clock := func() time.Time { return time.Now().UTC() }
	live.Source = setup.Leases(st, clock) // every reader judges agents by the gateway leases
	sfnc := sfn.NewFromConfig(cfg)
	tokens, err := tokenTable(getenv)
	if err != nil {
		return nil, err
	}
	executors := setup.Executors(getenv, cfg, st, clock, log)
	var planning api.Planning
	if fn := getenv("MYRIARCH_PLANNER_FUNCTION"); fn != "" {
		planning = remote.Lambda{Client: awslambda.NewFromConfig(cfg), Function: fn}
	} else {
		planning = &plannertask.Runner{Planner: planner.Planner{Store: st, Clock: clock, NewID: newID, Liveness: live}, Executors: executors,
			SFN: sfnc, StateMachineArn: getenv("MYRIARCH_STATE_MACHINE_ARN"), Tokens: st, Log: log, Metrics: os.Stdout}
	}
	return api.New(api.Deps{
		Store: st, SFN: sfnc, Planning: planning, Auth: tokens, Trusted: fromAuthorizer,
		Actions: enginetask.Evaluator{Store: st, Executors: executors, Clock: clock, Log: log, Audit: st, Updaters: st,
			ServerTimezone: getenv(setup.EnvServerTimezone), Liveness: live, Metrics: os.Stdout},
		Catalog: api.StaticCatalog{Versions: list(getenv("MYRIARCH_RELEASES")), Platforms: list(getenv("MYRIARCH_PLATFORMS"))},
		Clock:   clock, NewID: newID, Log: log,
		Liveness:       live, // the inventory judges agents as the rollouts do
		ServerTimezone: getenv(setup.EnvServerTimezone),
	})
}

// tokenTable is the configured tokens; none behind the authorizer is fine
// (actors are then shown by their references).
func tokenTable(getenv func(string) string) (*api.TokenTable, error) {
	if getenv("MYRIARCH_TOKENS") == "" && getenv("MYRIARCH_TOKENS_FILE") == "" {
		return api.NewTokenTable(nil)
	}
	return api.LoadTokens(getenv)
}

// fromAuthorizer is the principal the token authorizer put into the
// request context (requestContext.authorizer), which the proxy adapter
// hands on in the request's context.
func fromAuthorizer(r *http.Request) (api.Principal, bool) {
	rc, ok := core.GetAPIGatewayContextFromContext(r.Context())
	if !ok || rc.Authorizer == nil {
		return api.Principal{}, false
	}
	return api.PrincipalFromAuthorizer(rc.Authorizer)
}

func newID() string {
	var b [12]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
