package main

import (
	"reflect"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"
)

// The release refresh is deployed, but its daily schedule is off unless a
// deployment names distributions to refresh.
func TestReleaseRefresh_DailyScheduleOffByDefault(t *testing.T) {
	s := synthesized(t, nil)
	fnID, fn := s.function(t, fnReleases)
	must(t, "a disabled daily schedule", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"ScheduleExpression": "rate(1 day)",
			"State":              "DISABLED",
			"Targets":            []any{assertions.Match_ObjectLike(&map[string]any{"Arn": map[string]any{"Fn::GetAtt": []any{fnID, "Arn"}}})},
		})
	})
	if e := env(fn.Properties); e[envReleaseRefresh] != nil || e[envReleaseSourceURL] != nil {
		t.Errorf("environment %v: nothing to refresh by default", e)
	}
}

func TestReleaseRefresh_OnWhenDistributionsAreNamed(t *testing.T) {
	s := synthesized(t, map[string]string{"releaseRefresh": "otelcol-contrib"})
	fnID, fn := s.function(t, fnReleases)
	must(t, "an enabled daily schedule", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"ScheduleExpression": "rate(1 day)",
			"State":              "ENABLED",
			"Targets": []any{assertions.Match_ObjectLike(&map[string]any{
				"Arn":         map[string]any{"Fn::GetAtt": []any{fnID, "Arn"}},
				"RetryPolicy": map[string]any{"MaximumRetryAttempts": 2, "MaximumEventAgeInSeconds": 21600},
			})},
		})
	})
	if e := env(fn.Properties); e[envReleaseRefresh] != "otelcol-contrib" || e[envReleaseSourceURL] != nil {
		t.Errorf("environment %v, want the distributions and GitHub's default API", e)
	}
}

// The refresh reads and writes the catalogue in the objects table, and
// nothing else: no other table, no state machine, no function.
func TestReleaseRefresh_LeastPrivilege(t *testing.T) {
	s := synthesized(t, nil)
	_, fn := s.function(t, fnReleases)
	g := s.granted(t, s.policies(t)[roleOf(fn, "Role")])
	if want := []string{"objects: PutItem Query"}; !reflect.DeepEqual(g.dynamo, want) { // ReleasesOf; PutRelease
		t.Errorf("DynamoDB %q, want %q", g.dynamo, want)
	}
	want := []string{"logs:CreateLogStream", "logs:PutLogEvents", "xray:PutTelemetryRecords", "xray:PutTraceSegments"}
	if len(g.states) != 0 || len(g.invokes) != 0 || !reflect.DeepEqual(g.other, want) {
		t.Errorf("states %v invokes %v other %v, want only its logs and tracing", g.states, g.invokes, g.other)
	}
	for _, f := range functionSpecs {
		if f.Name == fnReleases && (f.APITokens || f.Catalog || f.StartExecution || f.SendTaskResponse || f.InvokesPlanner || f.ReservedConcurrency != 0) {
			t.Errorf("the refresh's spec grants more than the catalogue: %+v", f)
		}
	}
}
