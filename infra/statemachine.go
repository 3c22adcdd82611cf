package main

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/aws-cdk-go/awscdk/v2/awslogs"
	"github.com/aws/aws-cdk-go/awscdk/v2/awsstepfunctions"
	"github.com/aws/constructs-go/constructs/v10"
	"github.com/aws/jsii-runtime-go"
)

// rolloutDefinition is the rollout state machine's ASL, relative to the
// repository: the same file the local Step Functions endpoint runs.
const rolloutDefinition = "statemachines/rollout.asl.json"

// placeholder matches a DefinitionSubstitutions key in ASL: ${EngineFunctionArn}.
var placeholder = regexp.MustCompile(`\$\{([A-Za-z0-9_]+)\}`)

// substitutionKey is the placeholder that stands for a function's ARN:
// engine -> EngineFunctionArn, agent-event -> AgentEventFunctionArn.
func substitutionKey(function string) string {
	var b strings.Builder
	for _, part := range strings.Split(function, "-") {
		if part != "" {
			b.WriteString(strings.ToUpper(part[:1]) + part[1:])
		}
	}
	return b.String() + "FunctionArn"
}

// placeholders lists, sorted and once each, the substitution keys an ASL
// document uses.
func placeholders(asl []byte) []string {
	seen := map[string]bool{}
	for _, m := range placeholder.FindAllSubmatch(asl, -1) {
		seen[string(m[1])] = true
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// taskFunctions maps each placeholder of the definition to the function it
// names; a placeholder that names no function of the app is an error, so
// a new task Lambda in the ASL cannot deploy without its function.
func taskFunctions(asl []byte) (map[string]string, error) {
	byKey := map[string]string{}
	for _, f := range functionSpecs {
		byKey[substitutionKey(f.Name)] = f.Name
	}
	out := map[string]string{}
	var unknown []string
	for _, k := range placeholders(asl) {
		name, ok := byKey[k]
		if !ok {
			unknown = append(unknown, "${"+k+"}")
			continue
		}
		out[k] = name
	}
	if len(unknown) > 0 {
		return nil, fmt.Errorf("%s: %s name no function of infra/functions.go", rolloutDefinition, strings.Join(unknown, ", "))
	}
	return out, nil
}

// rolloutStateMachineName is fixed per stage, so that its ARN is known
// before the state machine exists (see rolloutStateMachineArn).
func rolloutStateMachineName(c Config) string { return "myriarch-" + c.Stage + "-rollout" }

// rolloutStateMachineArn is built from the name rather than referenced:
// the state machine needs the engine's ARN (a substitution) and the engine
// needs the state machine's ARN (StartExecution, SendTaskSuccess, its
// environment). A reference both ways is a cycle CloudFormation refuses;
// a formatted ARN depends on nothing but the stack's account and region.
func rolloutStateMachineArn(scope constructs.Construct, c Config) *string {
	return awscdk.Stack_Of(scope).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("states"),
		Resource:     jsii.String("stateMachine"),
		ResourceName: jsii.String(rolloutStateMachineName(c)),
		ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
	})
}

// rolloutExecutionsArn covers every execution of the rollout state
// machine: arn:<partition>:states:<region>:<account>:execution:myriarch-<stage>-rollout:*.
func rolloutExecutionsArn(scope constructs.Construct, c Config) *string {
	return awscdk.Stack_Of(scope).FormatArn(&awscdk.ArnComponents{
		Service:      jsii.String("states"),
		Resource:     jsii.String("execution"),
		ResourceName: jsii.String(rolloutStateMachineName(c) + ":*"),
		ArnFormat:    awscdk.ArnFormat_COLON_RESOURCE_NAME,
	})
}

// newRolloutStateMachine deploys statemachines/rollout.asl.json as it is,
// with each ${<Name>FunctionArn} replaced by that function's ARN, every
// event logged with its data, and X-Ray tracing; it may invoke exactly the
// functions its definition names.
func newRolloutStateMachine(scope constructs.Construct, c Config, fns Functions) (awsstepfunctions.StateMachine, error) {
	path := filepath.Join(c.RepoRoot, rolloutDefinition)
	asl, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read the rollout state machine: %w", err)
	}
	tasks, err := taskFunctions(asl)
	if err != nil {
		return nil, err
	}
	subs := map[string]*string{}
	for key, name := range tasks {
		subs[key] = fns[name].FunctionArn()
	}
	logs := awslogs.NewLogGroup(scope, jsii.String("Logs-rollout"), &awslogs.LogGroupProps{
		// The vendedlogs prefix keeps CloudWatch's resource policy small (AWS's advice for Step Functions).
		LogGroupName:  jsii.String("/aws/vendedlogs/states/" + rolloutStateMachineName(c)),
		Retention:     awslogs.RetentionDays_ONE_MONTH,
		RemovalPolicy: awscdk.RemovalPolicy_DESTROY,
	})
	sm := awsstepfunctions.NewStateMachine(scope, jsii.String("RolloutStateMachine"), &awsstepfunctions.StateMachineProps{
		StateMachineName:        jsii.String(rolloutStateMachineName(c)),
		StateMachineType:        awsstepfunctions.StateMachineType_STANDARD,
		DefinitionBody:          awsstepfunctions.DefinitionBody_FromFile(jsii.String(path), nil),
		DefinitionSubstitutions: &subs,
		Logs: &awsstepfunctions.LogOptions{
			Destination:          logs,
			Level:                awsstepfunctions.LogLevel_ALL,
			IncludeExecutionData: jsii.Bool(true),
		},
		TracingEnabled: jsii.Bool(true),
	})
	for _, key := range sortedKeys(tasks) {
		fns[tasks[key]].GrantInvoke(sm)
	}
	return sm, nil
}
