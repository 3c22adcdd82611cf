package main

import (
	"path"
	"reflect"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/execution"
	"github.com/myriarch/myriarch/adapters/setup"
	"github.com/myriarch/myriarch/adapters/watchdog"
)

// The watchdog runs every 5 minutes, a missed run not retried (the next
// one is the same check).
func TestWatchdog_EveryFiveMinutes(t *testing.T) {
	s := synthesized(t, nil)
	fnID, _ := s.function(t, fnWatchdog)
	must(t, "schedule", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"ScheduleExpression": "rate(5 minutes)",
			"State":              "ENABLED",
			"Targets": []any{assertions.Match_ObjectLike(&map[string]any{
				"Arn":         map[string]any{"Fn::GetAtt": []any{fnID, "Arn"}},
				"RetryPolicy": map[string]any{"MaximumRetryAttempts": 0, "MaximumEventAgeInSeconds": 300},
			})},
		})
	})
}

// The watchdog finds what adapters/setup and adapters/watchdog read in its
// environment: the tables, the state machine, the stage that is its
// metrics' dimension (and the alarms').
func TestWatchdog_Environment(t *testing.T) {
	s := synthesized(t, nil)
	_, fn := s.function(t, fnWatchdog)
	e := env(fn.Properties)
	if e[setup.EnvTablePrefix] != tablePrefix(s.config) || e[watchdog.EnvStage] != testStage {
		t.Errorf("environment %v, want the table prefix and the stage", e)
	}
	if got := flatten(e[setup.EnvStateMachineArn]); got != "arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:stateMachine:myriarch-test-rollout" {
		t.Errorf("%s = %s, want the rollout state machine", setup.EnvStateMachineArn, got)
	}
}

// DescribeExecution is granted on the executions the watchdog asks about:
// the ARN watchdog.ExecutionArn makes of the state machine's ARN in its
// environment, for a first execution and a continued one, matches the
// policy's resource; and on no other state machine's.
func TestWatchdog_DescribesTheRolloutExecutions(t *testing.T) {
	s := synthesized(t, nil)
	_, fn := s.function(t, fnWatchdog)
	g := s.granted(t, s.policies(t)[roleOf(fn, "Role")])
	const describe = "states:DescribeExecution on "
	var pattern string
	for _, st := range g.states {
		if len(st) > len(describe) && st[:len(describe)] == describe {
			pattern = st[len(describe):]
		}
	}
	smArn := flatten(env(fn.Properties)[setup.EnvStateMachineArn])
	for _, name := range []string{execution.Name("r-20260302t100000-0123456789ab", 1), execution.Name("r-20260302t100000-0123456789ab", 3)} {
		arn := watchdog.ExecutionArn(smArn, name)
		if ok, err := path.Match(pattern, arn); err != nil || !ok {
			t.Errorf("DescribeExecution on %q does not cover %s", pattern, arn)
		}
	}
	other := watchdog.ExecutionArn("arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:stateMachine:myriarch-test-other", "r-1")
	if ok, _ := path.Match(pattern, other); ok || pattern == "" {
		t.Errorf("DescribeExecution on %q covers %s", pattern, other)
	}
	for _, f := range functionSpecs {
		if f.DescribeExecutions != (f.Name == fnWatchdog) {
			t.Errorf("%s describes executions: %v; only the watchdog does", f.Name, f.DescribeExecutions)
		}
	}
	if want := wantDynamoDB[fnWatchdog]; !reflect.DeepEqual(g.dynamo, sorted(want)) {
		t.Errorf("DynamoDB %q, want only reads %q", g.dynamo, want)
	}
}

// The scheduled functions keep no queue of failed runs: Lambda's own
// asynchronous invocation retries none and drops an event older than the
// schedule's period (its defaults: 2 retries, 6 hours).
func TestScheduled_NoAsyncRetries(t *testing.T) {
	s := synthesized(t, nil)
	for name, age := range map[string]int{fnPlanner: 60, fnWatchdog: 300} {
		fnID, _ := s.function(t, name)
		must(t, name+" async invocation", func() {
			s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventInvokeConfig"), map[string]any{
				"FunctionName":             map[string]any{"Ref": fnID},
				"MaximumRetryAttempts":     0,
				"MaximumEventAgeInSeconds": age,
			})
		})
	}
}
