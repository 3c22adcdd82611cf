package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsiam"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslambda"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/executor/secrets"
	"github.com/myriarch/myriarch/adapters/gate/gateread"
	"github.com/myriarch/myriarch/adapters/setup"
)

// The Lambdas, one main package each in functions/<name>. The list must
// match functions/ (functions_test.go checks it both ways).
const (
	fnEngine     = "engine"      // the rollout state machine's tasks; the payload's "task" picks one
	fnPlanner    = "planner"     // the single writer of rollouts: schedule and after a revision
	fnAgentEvent = "agent-event" // the agents table's stream: evaluates that agent's targets
	fnAPI        = "api"         // the REST API behind API Gateway
	fnAuthorizer = "authorizer"  // API Gateway's bearer-token authorizer
	fnReleases   = "releases"    // the daily refresh of the release catalogue from the publishers' releases
	fnNotify     = "notify"      // the events table's stream (the outbox): publishes rollout notifications on the bus
	fnWatchdog   = "watchdog"    // every 5 minutes: a new execution for a stranded rollout; the approval-wait metric
)

// functionSpec is one Lambda and everything it is allowed to touch: IAM
// grants are derived from these fields and from its entry in
// functionTables (access.go, its DynamoDB actions per table) only, so the
// two are the least-privilege policy. Every function writes to its own log
// group and nowhere else (functionRole).
type functionSpec struct {
	Name                string
	MemoryMB            int
	TimeoutSeconds      int
	ReservedConcurrency int  // 0: none
	StartExecution      bool // states:StartExecution on the rollout state machine
	SendTaskResponse    bool // states:SendTaskSuccess on the rollout state machine (wakes a parked execution)
	DescribeExecutions  bool // states:DescribeExecution on the rollout state machine's executions
	InvokesPlanner      bool // lambda:InvokeFunction on the planner
	APITokens           bool // the operators' token table (MYRIARCH_TOKENS)
	Catalog             bool // the collector releases and platforms (MYRIARCH_RELEASES, MYRIARCH_PLATFORMS)
	ServerTimezone      bool // rollouts' default timezone for maintenance windows (MYRIARCH_DEFAULT_TIMEZONE)
	ReleaseRefresh      bool // what the release refresh imports, and from where (MYRIARCH_RELEASE_REFRESH, MYRIARCH_RELEASE_SOURCE_URL)
	Gates               bool // reads health gates: their settings, IAM and VPC (gates.go)
	PublishesEvents     bool // events:PutEvents on the notifications bus (MYRIARCH_EVENT_BUS)
	// Liveness: judges whether agents are online or gone (passes, plans,
	// the inventory and fleet counts): MYRIARCH_AGENT_RETENTION.
	Liveness bool
	// ExecutorSecrets: calls webhook and AWX executors, whose secrets it
	// reads from Secrets Manager under the stage's prefix (secrets.go).
	ExecutorSecrets bool
}

// wholeRolloutMB is the memory of the functions that may hold a whole
// rollout or fleet at once (every target and agent of it): one evaluation
// over 100,000 targets peaked at about 380 MB of heap and 450 MB resident
// (docs/scale.md), too close to 512 MB. 1,024 MB also gives a function
// twice the CPU of 512, and most of such an evaluation is CPU.
const wholeRolloutMB = 1024

// memoryLimitPercent is the share of a function's memory that Go's
// collector keeps the heap under (GOMEMLIMIT): near the limit it collects
// more often rather than let the function be killed for memory. The rest
// is the runtime's own and the binary's.
const memoryLimitPercent = 90

var functionSpecs = []functionSpec{
	{Name: fnEngine, MemoryMB: wholeRolloutMB, TimeoutSeconds: 120,
		StartExecution: true, SendTaskResponse: true, // continue as a new execution; park wakes itself when the status moved on
		ServerTimezone: true, Gates: true, Liveness: true, // the read-gates task; its passes judge liveness
		ExecutorSecrets: true}, // Start, Cancel, the AWX job polling
	{Name: fnPlanner, MemoryMB: wholeRolloutMB, TimeoutSeconds: 300, ReservedConcurrency: 1, // the single writer of rollouts (Config.PlannerReservedConcurrency may lift it)
		StartExecution: true, SendTaskResponse: true, // one execution per rollout; wakes a parked rollout it ends
		Liveness:        true,  // gone agents get no targets
		ExecutorSecrets: true}, // Cancel of a superseded rollout's targets
	{Name: fnAgentEvent, MemoryMB: wholeRolloutMB, TimeoutSeconds: 60, // a batch whose targets do not decide alone evaluates the whole rollout
		InvokesPlanner: true,                                         // has the planner plan the fleets that agents joined or left
		ServerTimezone: true, ExecutorSecrets: true, Liveness: true}, // its passes start targets
	{Name: fnAPI, MemoryMB: wholeRolloutMB, TimeoutSeconds: 29, // API Gateway gives up after 29 s; an action evaluates the whole rollout
		SendTaskResponse: true, InvokesPlanner: true, // approve and resume wake the execution; select-version and revisions run the planner
		APITokens: true, Catalog: true, // display names of actors; version options
		ServerTimezone: true, ExecutorSecrets: true, Liveness: true}, // its actions run evaluation passes, as the engine does; the inventory's gone
	{Name: fnAuthorizer, MemoryMB: 128, TimeoutSeconds: 10, // checks the bearer token against the hashed table in its environment
		APITokens: true},
	{Name: fnReleases, MemoryMB: 128, TimeoutSeconds: 120, // a few GitHub pages per repository, then a write per new release
		ReleaseRefresh: true},
	{Name: fnNotify, MemoryMB: 128, TimeoutSeconds: 60, // a batch of the outbox's stream: PutEvents ten at a time
		PublishesEvents: true},
	{Name: fnWatchdog, MemoryMB: 128, TimeoutSeconds: 120, // a few reads and a DescribeExecution per active rollout
		StartExecution: true, DescribeExecutions: true}, // is each active rollout's execution running? if not, start the next
}

// Functions are the deployed Lambdas by name.
type Functions map[string]awslambda.Function

// functionName is the deployed name: myriarch-<stage>-<function>.
func functionName(c Config, name string) string { return "myriarch-" + c.Stage + "-" + name }

// checkBuilt fails with one message naming every function whose bootstrap
// scripts/build-lambdas.sh did not produce, rather than CDK's bare
// "Cannot find asset".
func checkBuilt(c Config) error {
	var missing []string
	for _, f := range functionSpecs {
		if _, err := os.Stat(filepath.Join(c.LambdaBuildDir, f.Name, "bootstrap")); err != nil {
			missing = append(missing, f.Name)
		}
	}
	if len(missing) > 0 {
		return fmt.Errorf("no bootstrap under %s for: %s; run scripts/build-lambdas.sh (each needs a main package in functions/<name>)",
			c.LambdaBuildDir, strings.Join(missing, ", "))
	}
	return nil
}

// newFunctions creates every Lambda: Go on provided.al2023 for arm64, JSON
// logs kept a month, X-Ray tracing, the stage's table prefix in its
// environment, a role of its own; the one that reads gates in the gate
// network, if any. Grants come later, once the state machine exists.
func newFunctions(scope constructs.Construct, c Config, net *gateNetwork) Functions {
	out := Functions{}
	for _, f := range functionSpecs {
		logs := awslogs.NewLogGroup(scope, jsii.String("Logs-"+f.Name), &awslogs.LogGroupProps{
			LogGroupName:  jsii.String("/aws/lambda/" + functionName(c, f.Name)),
			Retention:     awslogs.RetentionDays_ONE_MONTH,
			RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
		})
		role := functionRole(scope, c, f, logs)
		props := &awslambda.FunctionProps{
			Role:          role,
			FunctionName:  jsii.String(functionName(c, f.Name)),
			Runtime:       awslambda.Runtime_PROVIDED_AL2023(),
			Architecture:  awslambda.Architecture_ARM_64(),
			Handler:       jsii.String("bootstrap"),
			Code:          awslambda.Code_FromAsset(jsii.String(filepath.Join(c.LambdaBuildDir, f.Name)), nil),
			MemorySize:    jsii.Number(float64(f.MemoryMB)),
			Timeout:       awscdk.Duration_Seconds(jsii.Number(float64(f.TimeoutSeconds))),
			Tracing:       awslambda.Tracing_ACTIVE,
			LoggingFormat: awslambda.LoggingFormat_JSON,
			LogGroup:      logs,
		}
		if n := reservedConcurrency(c, f); n > 0 {
			props.ReservedConcurrentExecutions = jsii.Number(float64(n))
		}
		if f.Gates {
			net.place(props, role)
		}
		fn := awslambda.NewFunction(scope, jsii.String("Function-"+f.Name), props)
		env := functionEnvironment(c, f)
		for _, name := range sortedKeys(env) { // in name order: a stable template
			fn.AddEnvironment(jsii.String(name), jsii.String(env[name]), nil)
		}
		out[f.Name] = fn
	}
	return out
}

// reservedConcurrency is what f reserves: the planner's follows the
// configuration (0 for accounts whose quota leaves nothing to reserve).
func reservedConcurrency(c Config, f functionSpec) int {
	if f.Name == fnPlanner {
		return min(f.ReservedConcurrency, c.PlannerReservedConcurrency)
	}
	return f.ReservedConcurrency
}

// functionRole is the function's own role, in place of the one CDK would
// make with the AWS managed policy AWSLambdaBasicExecutionRole (logs on
// every log group of the account): Lambda may assume it, and it may write
// to the function's log group alone. The stack creates that group, with
// its retention, so the role has no logs:CreateLogGroup. Everything else
// the function may do is added by the grants.
func functionRole(scope constructs.Construct, c Config, f functionSpec, logs awslogs.LogGroup) awsiam.Role {
	role := awsiam.NewRole(scope, jsii.String("Role-"+f.Name), &awsiam.RoleProps{
		AssumedBy:   awsiam.NewServicePrincipal(jsii.String("lambda.amazonaws.com"), nil),
		Description: jsii.String("Myriarch " + c.Stage + ": the " + f.Name + " function"),
	})
	role.AddToPolicy(awsiam.NewPolicyStatement(&awsiam.PolicyStatementProps{
		Actions:   jsii.Strings("logs:CreateLogStream", "logs:PutLogEvents"),
		Resources: &[]*string{logs.LogGroupArn()}, // arn:...:log-group:/aws/lambda/<function>:*, its streams
	}))
	return role
}

// functionEnvironment is what a function reads besides the ARNs granted
// later (the state machine, the planner).
func functionEnvironment(c Config, f functionSpec) map[string]string {
	env := map[string]string{envStage: c.Stage, envTablePrefix: tablePrefix(c),
		envGoMemLimit: fmt.Sprintf("%dMiB", f.MemoryMB*memoryLimitPercent/100)}
	set := func(name, value string) {
		if value != "" {
			env[name] = value
		}
	}
	if f.APITokens {
		set(envTokens, c.APITokens)
	}
	if f.ServerTimezone {
		set(setup.EnvServerTimezone, c.DefaultTimezone)
	}
	if f.Liveness {
		// Every function that judges whether an agent is online reads the
		// same rule: the planner too, so that it does not call gone an agent
		// the engine still counts as online.
		set(setup.EnvAgentRetention, c.AgentRetention)
		set(setup.EnvReconnectGrace, c.ReconnectGrace)
	}
	if f.Catalog {
		set("MYRIARCH_RELEASES", c.Releases)
		set("MYRIARCH_PLATFORMS", c.Platforms)
	}
	if f.ReleaseRefresh {
		set(envReleaseRefresh, c.ReleaseRefresh)
		set(envReleaseSourceURL, c.ReleaseSourceURL)
	}
	if f.ExecutorSecrets {
		set(secrets.EnvPrefix, executorSecretsPrefix(c))
	}
	if f.Gates {
		set(gateread.EnvPrometheusURL, c.PrometheusURL)
		set(gateread.EnvPrometheusSigV4Region, c.AMPWorkspace.Region)
		set(gateread.EnvAlertmanagerURL, c.AlertmanagerURL)
		set(gateread.EnvCloudWatch, onOff(c.CloudWatchGates))
	}
	return env
}

// Environment variables the functions and the gateway read.
const (
	envStage           = "MYRIARCH_STAGE"
	envTablePrefix     = "MYRIARCH_TABLE_PREFIX"      // tables.WithPrefix(prefix) names every table
	envStateMachineArn = "MYRIARCH_STATE_MACHINE_ARN" // the rollout state machine
	envPlannerFunction = "MYRIARCH_PLANNER_FUNCTION"  // name of the planner Lambda (the api invokes it)
	envTokens          = "MYRIARCH_TOKENS"            // the operators' token table, hashes only (adapters/api.LoadTokens)
	envGoMemLimit      = "GOMEMLIMIT"                 // Go's soft memory limit, a share of the function's memory
	// The release refresh's (functions/releases): what to refresh and where GitHub's API is.
	envReleaseRefresh   = "MYRIARCH_RELEASE_REFRESH"
	envReleaseSourceURL = "MYRIARCH_RELEASE_SOURCE_URL"
)
