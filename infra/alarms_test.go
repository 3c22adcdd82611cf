package main

import (
	"fmt"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// alarmWant is what one alarm watches and when it fires, as the template
// says it: the metric by namespace, name and dimensions (Name=value, or
// Name=the logical ids the value refers to), the statistic over the
// period, the comparison with the threshold.
type alarmWant struct {
	namespace, metric, dimension string
	statistic                    string
	periodSeconds                float64
	comparison                   string
	threshold                    float64
}

const (
	atLeast = "GreaterThanOrEqualToThreshold"
	above   = "GreaterThanThreshold"
)

// wantAlarms are every alarm of the stack by name, in the given synthesis.
func wantAlarms(t *testing.T, s *synthesis) map[string]alarmWant {
	t.Helper()
	id := func(typ, prefix string) string {
		for id := range s.ofType(typ) {
			if strings.HasPrefix(id, prefix) {
				return id
			}
		}
		t.Fatalf("no %s %s*", typ, prefix)
		return ""
	}
	name := func(what string) string { return "myriarch-" + s.config.Stage + "-" + what }
	sm := id("AWS::StepFunctions::StateMachine", "")
	notify, _ := s.function(t, fnNotify)
	want := map[string]alarmWant{
		name("rollout-executions-failed"):    {"AWS/States", "ExecutionsFailed", "StateMachineArn=" + sm, "Sum", 300, atLeast, 1},
		name("rollout-executions-timed-out"): {"AWS/States", "ExecutionsTimedOut", "StateMachineArn=" + sm, "Sum", 300, atLeast, 1},
		name("agent-events-dead-letters"): {"AWS/SQS", "ApproximateNumberOfMessagesVisible",
			"QueueName=" + id("AWS::SQS::Queue", "AgentEventsFailed"), "Maximum", 300, atLeast, 1},
		name("notifications-dead-letters"): {"AWS/SQS", "ApproximateNumberOfMessagesVisible",
			"QueueName=" + id("AWS::SQS::Queue", "NotificationsFailed"), "Maximum", 300, atLeast, 1},
		name("notifications-late"): {"AWS/Lambda", "IteratorAge", "FunctionName=" + notify, "Maximum", 300, atLeast,
			float64(notificationsLate.Milliseconds())}, // the outbox's stream: late, not failed
		// The watchdog's metrics (adapters/watchdog): the longest approval wait
		// over two of its runs, and the executions it started.
		name("rollout-waiting-for-approval-too-long"): {"Myriarch", "OldestApprovalWaitSeconds", "Stage=" + s.config.Stage, "Maximum", 600, above,
			s.config.ApprovalWaitAlarm.Seconds()},
		name("watchdog-resumed-rollouts"): {"Myriarch", "RolloutsResumed", "Stage=" + s.config.Stage, "Sum", 300, atLeast, 1},
	}
	for _, f := range functionSpecs {
		fn, _ := s.function(t, f.Name)
		throttles := 1.0
		if f.ReservedConcurrency > 0 {
			throttles = plannerCollisions // the api's synchronous runs meet the scheduled one now and then
		}
		want[name(f.Name+"-lambda-errors")] = alarmWant{"AWS/Lambda", "Errors", "FunctionName=" + fn, "Sum", 300, atLeast, 1}
		want[name(f.Name+"-lambda-throttles")] = alarmWant{"AWS/Lambda", "Throttles", "FunctionName=" + fn, "Sum", 300, atLeast, throttles}
	}
	if s.config.Gateway {
		// The load balancer's name is CDK's, taken from its listener's ARN.
		dims := "LoadBalancer=" + id("AWS::ElasticLoadBalancingV2::Listener", "") + " TargetGroup=" + id("AWS::ElasticLoadBalancingV2::TargetGroup", "")
		want[name("gateway-unhealthy-tasks")] = alarmWant{"AWS/NetworkELB", "UnHealthyHostCount", dims, "Maximum", 60, atLeast, 1}
	}
	return want
}

// gotAlarms reads the alarms of the template by name.
func gotAlarms(t *testing.T, s *synthesis) map[string]alarmWant {
	t.Helper()
	got := map[string]alarmWant{}
	for id, a := range s.ofType("AWS::CloudWatch::Alarm") {
		p := a.Properties
		var dims []string
		for _, d := range list(p["Dimensions"]) {
			if m, ok := d.(map[string]any); ok {
				value := flatten(m["Value"])
				if ids := refs(m["Value"]); len(ids) > 0 {
					value = strings.Join(ids, ",")
				}
				dims = append(dims, fmt.Sprint(m["Name"])+"="+value)
			}
		}
		sort.Strings(dims)
		name := fmt.Sprint(p["AlarmName"])
		if _, twice := got[name]; twice || p["AlarmName"] == nil {
			t.Errorf("%s: alarm name %v missing or taken twice", id, p["AlarmName"])
		}
		period, _ := p["Period"].(float64)
		threshold, _ := p["Threshold"].(float64)
		got[name] = alarmWant{fmt.Sprint(p["Namespace"]), fmt.Sprint(p["MetricName"]), strings.Join(dims, " "), fmt.Sprint(p["Statistic"]),
			period, fmt.Sprint(p["ComparisonOperator"]), threshold}
		// Every alarm judges one period; no data is no trouble (a quiet
		// function, an empty queue, a watchdog run that found nothing).
		if p["EvaluationPeriods"] != float64(1) || p["TreatMissingData"] != "notBreaching" {
			t.Errorf("%s: %v evaluation periods, missing data %v; want 1 and notBreaching", name, p["EvaluationPeriods"], p["TreatMissingData"])
		}
		// What to do, in CloudWatch's limit of 1,024 characters.
		if d := fmt.Sprint(p["AlarmDescription"]); p["AlarmDescription"] == nil || len(d) > 1024 || len(d) < 80 {
			t.Errorf("%s: description of %d characters, want one that says what to do in at most 1,024: %q", name, len(d), d)
		}
	}
	return got
}

func TestAlarms_NamedAndWhatTheyWatch(t *testing.T) {
	for _, ctx := range []map[string]string{nil, {"gateway": "false"}, {"approvalWaitAlarm": "8h"}} {
		t.Run(fmt.Sprint(ctx), func(t *testing.T) {
			s := synthesized(t, ctx)
			got, want := gotAlarms(t, s), wantAlarms(t, s)
			for name, w := range want {
				if g, ok := got[name]; !ok {
					t.Errorf("no alarm %s", name)
				} else if !reflect.DeepEqual(g, w) {
					t.Errorf("alarm %s\n got %+v\nwant %+v", name, g, w)
				}
			}
			for name := range got {
				if _, ok := want[name]; !ok {
					t.Errorf("alarm %s is not expected", name)
				}
			}
		})
	}
}

// The approval wait's threshold is the setting, in seconds.
func TestAlarms_ApprovalWaitThreshold(t *testing.T) {
	s := synthesized(t, map[string]string{"approvalWaitAlarm": "8h"})
	if got := gotAlarms(t, s)["myriarch-test-rollout-waiting-for-approval-too-long"].threshold; got != 8*3600 {
		t.Errorf("threshold %v seconds, want 28800 (8h)", got)
	}
}

// docs/deploy.md lists every alarm under its name (the stage and, for the
// alarms of each function, the function written as <stage>, <function>)
// with its period as the template has it.
func TestAlarms_InTheDeployGuide(t *testing.T) {
	raw, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(raw)
	s := synthesized(t, nil)
	periods := map[float64]string{60: "1 minute", 300: "5 minutes", 600: "10 minutes"}
	rows := map[string]bool{}
	for name, a := range gotAlarms(t, s) {
		name = strings.Replace(name, "myriarch-"+testStage+"-", "myriarch-<stage>-", 1)
		for _, f := range functionSpecs {
			for _, kind := range []string{"-lambda-errors", "-lambda-throttles"} {
				if strings.HasSuffix(name, "-"+f.Name+kind) {
					name = "myriarch-<stage>-<function>" + kind
				}
			}
		}
		row := "| `" + name + "` | " + periods[a.periodSeconds] + " |"
		if !rows[row] && !strings.Contains(doc, row) {
			t.Errorf("docs/deploy.md has no row %s", row)
		}
		rows[row] = true
	}
}
