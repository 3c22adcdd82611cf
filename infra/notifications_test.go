package main

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/aws/aws-cdk-go/awscdk/v2/assertions"
	"github.com/aws/jsii-runtime-go"

	"github.com/myriarch/myriarch/adapters/delivery"
	"github.com/myriarch/myriarch/adapters/store/tables"
	"github.com/myriarch/myriarch/core/notify"
)

func busID(t *testing.T, s *synthesis) string {
	t.Helper()
	buses := s.ofType("AWS::Events::EventBus")
	if len(buses) != 1 {
		t.Fatalf("%d event buses, want the notifications bus", len(buses))
	}
	for id, b := range buses {
		if b.Properties["Name"] != "myriarch-"+testStage {
			t.Errorf("bus name %v, want myriarch-%s", b.Properties["Name"], testStage)
		}
		return id
	}
	return ""
}

// The outbox: the events table keeps its items 14 days (TTL) and streams
// new images.
func TestNotifications_TheOutboxTable(t *testing.T) {
	s := synthesized(t, nil)
	_, r := s.table(t, tables.Events.Name)
	if got := r.Properties["TimeToLiveSpecification"]; !reflect.DeepEqual(got, map[string]any{"AttributeName": tables.AttrExpiresAt, "Enabled": true}) {
		t.Errorf("time to live %v, want on %s", got, tables.AttrExpiresAt)
	}
	for _, def := range tables.All() {
		if _, r := s.table(t, def.Name); def.TTL == "" && r.Properties["TimeToLiveSpecification"] != nil {
			t.Errorf("table %s has a time to live it does not declare", def.Name)
		}
	}
}

// The notify function reads the outbox's stream: inserts only, from the
// oldest record, bisecting failed batches and reporting the first record
// not published; what is not published within a day goes to a dead-letter
// queue (and an alarm). It publishes on the bus named in its environment.
func TestNotifications_FromTheStreamToTheBus(t *testing.T) {
	s := synthesized(t, nil)
	eventsID, _ := s.table(t, tables.Events.Name)
	fnID, fn := s.function(t, fnNotify)
	must(t, "event source mapping", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Lambda::EventSourceMapping"), map[string]any{
			"EventSourceArn":                 map[string]any{"Fn::GetAtt": []any{eventsID, "StreamArn"}},
			"FunctionName":                   map[string]any{"Ref": fnID},
			"StartingPosition":               "TRIM_HORIZON",
			"BisectBatchOnFunctionError":     true,
			"FunctionResponseTypes":          []any{"ReportBatchItemFailures"},
			"MaximumRecordAgeInSeconds":      86400,
			"MaximumRetryAttempts":           assertions.Match_Absent(), // until the record's age: nothing skipped
			"MaximumBatchingWindowInSeconds": assertions.Match_Absent(), // published within about a second
			"FilterCriteria":                 map[string]any{"Filters": []any{map[string]any{"Pattern": `{"eventName":["INSERT"]}`}}},
			"DestinationConfig":              assertions.Match_ObjectLike(&map[string]any{"OnFailure": assertions.Match_AnyValue()}),
		})
	})
	bus := busID(t, s)
	if got := env(fn.Properties)[delivery.EnvEventBus]; flatten(got) != "{"+bus+"}" {
		t.Errorf("%s = %v, want the bus %s", delivery.EnvEventBus, got, bus)
	}
	alarms := map[string]bool{}
	for _, a := range s.ofType("AWS::CloudWatch::Alarm") {
		alarms[fmt.Sprint(a.Properties["MetricName"])] = true
	}
	if !alarms["IteratorAge"] || !alarms["ApproximateNumberOfMessagesVisible"] {
		t.Errorf("alarms %v, want one on late notifications and one on those given up", alarms)
	}
}

// The notify function may put events on the notifications bus and nothing
// else: no table, no other bus; no other function may put events at all.
func TestNotifications_LeastPrivilege(t *testing.T) {
	s := synthesized(t, nil)
	bus := busID(t, s)
	policies := s.policies(t)
	for _, f := range functionSpecs {
		_, fn := s.function(t, f.Name)
		for _, st := range policies[roleOf(fn, "Role")] {
			for _, a := range st.actions {
				if a != "events:PutEvents" {
					continue
				}
				if f.Name != fnNotify {
					t.Errorf("%s may put events", f.Name)
				}
				if got := refs(st.resources); len(got) != 1 || got[0] != bus {
					t.Errorf("%s puts events on %v, want only the bus %s", f.Name, st.resources, bus)
				}
			}
		}
		if f.Name == fnNotify && len(functionTables[f.Name]) != 0 {
			t.Errorf("the notify function reads tables %v: the stream brings the items", functionTables[f.Name])
		}
	}
}

// The example routing is off by default: no topic, no rule on the bus.
func TestNotifications_ExampleOffByDefault(t *testing.T) {
	s := synthesized(t, nil)
	if n := len(s.ofType("AWS::SNS::Topic")); n != 0 {
		t.Errorf("%d topics, want none without notificationsTopic", n)
	}
	bus := busID(t, s)
	for id, r := range s.ofType("AWS::Events::Rule") {
		if ids := refs(r.Properties["EventBusName"]); len(ids) > 0 && ids[0] == bus {
			t.Errorf("rule %s on the notifications bus without notificationsTopic", id)
		}
	}
}

// With notificationsTopic, a rule on the bus sends paused, failed and
// rolled-back rollouts, as EventBridge carries them (Chatbot reads them
// so), to a topic that only EventBridge may publish to, over TLS only.
func TestNotifications_ExampleRuleAndTopic(t *testing.T) {
	s := synthesized(t, map[string]string{"notificationsTopic": "true"})
	bus := busID(t, s)
	topics := s.ofType("AWS::SNS::Topic")
	if len(topics) != 1 {
		t.Fatalf("%d topics, want the example's", len(topics))
	}
	var topicID string
	for id, r := range topics {
		topicID = id
		if r.Properties["TopicName"] != "myriarch-"+testStage+"-rollouts" {
			t.Errorf("topic name %v", r.Properties["TopicName"])
		}
	}
	catalogued := map[string]bool{}
	for _, e := range notify.Catalogue {
		catalogued[e.DetailType] = true
	}
	for _, dt := range exampleDetailTypes {
		if !catalogued[dt] {
			t.Errorf("the rule's detail-type %q is not in the catalogue", dt)
		}
	}
	must(t, "the rule", func() {
		s.template.HasResourceProperties(jsii.String("AWS::Events::Rule"), map[string]any{
			"EventBusName": map[string]any{"Ref": bus},
			"State":        "ENABLED",
			"EventPattern": map[string]any{"source": []any{"myriarch"}, "detail-type": []any{"Rollout Paused", "Rollout Failed", "Rollout Rolled Back"}},
			"Targets":      []any{map[string]any{"Arn": map[string]any{"Ref": topicID}, "Id": assertions.Match_AnyValue()}},
		})
	})
	for _, p := range s.ofType("AWS::SNS::TopicPolicy") {
		doc := p.Properties["PolicyDocument"].(map[string]any)
		for _, raw := range list(doc["Statement"]) {
			st := raw.(map[string]any)
			if st["Effect"] != "Allow" {
				continue
			}
			principal, _ := st["Principal"].(map[string]any)
			if !reflect.DeepEqual(principal, map[string]any{"Service": "events.amazonaws.com"}) || st["Action"] != "sns:Publish" ||
				!reflect.DeepEqual(refs(st["Resource"]), []string{topicID}) {
				t.Errorf("topic policy allows %v %v on %v, want only EventBridge to publish to the topic", principal, st["Action"], st["Resource"])
			}
		}
	}
	must(t, "output", func() {
		s.template.HasOutput(jsii.String("NotificationsTopicArn"), map[string]any{"Value": map[string]any{"Ref": topicID}})
	})
}
