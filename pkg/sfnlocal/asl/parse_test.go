package asl

import (
	"errors"
	"strings"
	"testing"
)

const validDefinition = `{
  "Comment": "every supported state",
  "StartAt": "Prepare",
  "TimeoutSeconds": 3600,
  "States": {
    "Prepare": {"Type": "Pass", "Parameters": {"items.$": "$.items", "id.$": "$$.Execution.Name"}, "ResultPath": "$.prepared", "Next": "Invoke"},
    "Invoke": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {"FunctionName": "engine", "Payload.$": "$"}, "ResultSelector": {"out.$": "$.Payload"},
      "TimeoutSeconds": 30, "Retry": [{"ErrorEquals": ["Lambda.ServiceException"], "MaxAttempts": 2}, {"ErrorEquals": ["States.ALL"]}],
      "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Failed"}], "Next": "Approve"},
    "Approve": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
      "Parameters": {"FunctionName": "arn:aws:lambda:us-east-1:123456789012:function:notify:live", "Payload": {"token.$": "$$.Task.Token"}},
      "HeartbeatSecondsPath": "$.heartbeat", "Next": "Legacy"},
    "Legacy": {"Type": "Task", "Resource": "arn:aws:lambda:us-east-1:123456789012:function:engine", "Next": "Route"},
    "Route": {"Type": "Choice", "Choices": [{"Variable": "$.done", "BooleanEquals": true, "Next": "Fan"}], "Default": "Sleep"},
    "Sleep": {"Type": "Wait", "SecondsPath": "$.wait", "Next": "Route"},
    "Fan": {"Type": "Parallel", "Branches": [
      {"StartAt": "B1", "States": {"B1": {"Type": "Pass", "End": true}}},
      {"StartAt": "B2", "States": {"B2": {"Type": "Succeed"}}}], "Next": "Each"},
    "Each": {"Type": "Map", "ItemsPath": "$.items", "MaxConcurrency": 2, "ItemSelector": {"v.$": "$$.Map.Item.Value"},
      "ItemProcessor": {"ProcessorConfig": {"Mode": "INLINE"}, "StartAt": "Item", "States": {"Item": {"Type": "Pass", "End": true}}}, "Next": "Done"},
    "Done": {"Type": "Succeed"},
    "Failed": {"Type": "Fail", "ErrorPath": "$.error.Error", "Cause": "failed"}
  }
}`

func TestParse_Valid(t *testing.T) {
	d, err := Parse(validDefinition)
	if err != nil {
		t.Fatal(err)
	}
	if d.StartAt != "Prepare" || len(d.States) != 10 || d.TimeoutSeconds != 3600 {
		t.Errorf("parsed %+v", d)
	}
	if r := d.States["Invoke"].Retry[1]; r.IntervalSeconds != 1 || r.MaxAttempts != 3 || r.BackoffRate != 2.0 {
		t.Errorf("retrier defaults: %+v", r)
	}
	if k := d.States["Approve"].Resource.Kind; k != ResourceLambdaInvokeWaitForTaskToken {
		t.Errorf("kind = %v", k)
	}
}

// Each invalid definition is refused naming the state (location) and the field.
func TestParse_Invalid(t *testing.T) {
	tests := []struct {
		name, def, want string
	}{
		{"not JSON", `{`, "INVALID_JSON_DESCRIPTION"},
		{"missing States", `{"StartAt":"A"}`, "These fields are required: [States] at /"},
		{"missing StartAt target", `{"StartAt":"B","States":{"A":{"Type":"Succeed"}}}`, "MISSING_TRANSITION_TARGET: Missing 'Next' target: B at /StartAt"},
		{"missing Next target", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"Nope"}}}`, "Missing 'Next' target: Nope at /States/A/Next"},
		{"missing Catch target", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","Catch":[{"ErrorEquals":["States.ALL"],"Next":"X"}],"End":true}}}`, "Missing 'Next' target: X at /States/A/Catch/0/Next"},
		{"unknown field", `{"StartAt":"A","States":{"A":{"Type":"Pass","Foo":1,"End":true}}}`, "The field 'Foo' is not supported by Step Functions at /States/A"},
		{"unknown top-level field", `{"StartAt":"A","Foo":1,"States":{"A":{"Type":"Succeed"}}}`, "The field 'Foo' is not supported by Step Functions at /"},
		{"both Next and End", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B","End":true},"B":{"Type":"Succeed"}}}`, "Only one of 'Next' or 'End' can be present at /States/A"},
		{"neither Next nor End", `{"StartAt":"A","States":{"A":{"Type":"Pass"}}}`, "Either 'Next' or 'End' is required at /States/A"},
		{"unreachable", `{"StartAt":"A","States":{"A":{"Type":"Succeed"},"B":{"Type":"Succeed"}}}`, "UNREACHABLE_STATE: State \"B\" is not reachable at /States/B"},
		{"bad type", `{"StartAt":"A","States":{"A":{"Type":"Nope"}}}`, "The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map] at /States/A/Type"},
		{"bad InputPath", `{"StartAt":"A","States":{"A":{"Type":"Pass","InputPath":"foo","End":true}}}`, "The value for the field 'InputPath' must be a valid JSONPath: a path must start with '$' at /States/A/InputPath"},
		{"indefinite ResultPath", `{"StartAt":"A","States":{"A":{"Type":"Pass","ResultPath":"$.a[*]","End":true}}}`, "must be a valid Reference Path at /States/A/ResultPath"},
		{"context ResultPath", `{"StartAt":"A","States":{"A":{"Type":"Pass","ResultPath":"$$.a","End":true}}}`, "at /States/A/ResultPath"},
		{"bad Parameters", `{"StartAt":"A","States":{"A":{"Type":"Pass","Parameters":{"x.$":"nope"},"End":true}}}`, "The value for the field 'x.$' must be a valid JSONPath or a valid intrinsic function call at /States/A/Parameters"},
		{"Wait without duration", `{"StartAt":"A","States":{"A":{"Type":"Wait","End":true}}}`, "Exactly one of 'Seconds', 'SecondsPath', 'Timestamp' or 'TimestampPath' is required at /States/A"},
		{"Wait negative", `{"StartAt":"A","States":{"A":{"Type":"Wait","Seconds":-1,"End":true}}}`, "at /States/A/Seconds"},
		{"Wait bad timestamp", `{"StartAt":"A","States":{"A":{"Type":"Wait","Timestamp":"2016-03-14 01:59:00Z","End":true}}}`, "at /States/A/Timestamp"},
		{"Choice with End", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true,"Next":"B"}],"End":true},"B":{"Type":"Succeed"}}}`, "The field 'End' is not supported by Step Functions at /States/A"},
		{"Choice rule without Next", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","IsPresent":true}],"Default":"B"},"B":{"Type":"Succeed"}}}`, "These fields are required: [Next] at /States/A/Choices/0"},
		{"Choice bad operand", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","NumericEquals":"1","Next":"B"}]},"B":{"Type":"Succeed"}}}`, "The value for the field 'NumericEquals' must be a NUMBER at /States/A/Choices/0/NumericEquals"},
		{"Choice two operators", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","IsNull":true,"IsString":true,"Next":"B"}]},"B":{"Type":"Succeed"}}}`, "exactly one comparison operator or one of And, Or, Not (found 2) at /States/A/Choices/0"},
		{"Task without Resource", `{"StartAt":"A","States":{"A":{"Type":"Task","End":true}}}`, "These fields are required: [Resource] at /States/A"},
		{"invoke without FunctionName", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"Payload":{}},"End":true}}}`, "The field 'FunctionName' is required but was missing at /States/A/Parameters"},
		{"invoke unknown parameter", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Bogus":1},"End":true}}}`, "The field 'Bogus' is not supported by Step Functions at /States/A/Parameters"},
		{"waitForTaskToken without token", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"f"},"End":true}}}`, "$$.Task.Token"},
		{"heartbeat not below timeout", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","TimeoutSeconds":5,"HeartbeatSeconds":5,"End":true}}}`, "at /States/A/HeartbeatSeconds"},
		{"Retry States.ALL not last", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","Retry":[{"ErrorEquals":["States.ALL"]},{"ErrorEquals":["X"]}],"End":true}}}`, "at /States/A/Retry/0/ErrorEquals"},
		{"Retry bad BackoffRate", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","Retry":[{"ErrorEquals":["X"],"BackoffRate":0.5}],"End":true}}}`, "at /States/A/Retry/0/BackoffRate"},
		{"unknown States error", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","Retry":[{"ErrorEquals":["States.Nope"]}],"End":true}}}`, "'States.Nope' is not a predefined error name at /States/A/Retry/0/ErrorEquals/0"},
		{"duplicate state names", `{"StartAt":"A","States":{"A":{"Type":"Parallel","Branches":[{"StartAt":"A","States":{"A":{"Type":"Succeed"}}}],"End":true}}}`, "DUPLICATE_STATE_NAME: Duplicate State name: A"},
		{"branch missing target", `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"X","States":{"B":{"Type":"Succeed"}}}],"End":true}}}`, "Missing 'Next' target: X at /States/P/Branches/0/StartAt"},
		{"no terminal state", `{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"A"}}}`, "NO_TERMINAL_STATE"},
		{"Map without processor", `{"StartAt":"M","States":{"M":{"Type":"Map","End":true}}}`, "These fields are required: [ItemProcessor] at /States/M"},
		{"long state name", `{"StartAt":"` + strings.Repeat("a", 81) + `","States":{"` + strings.Repeat("a", 81) + `":{"Type":"Succeed"}}}`, "State names must be 1 to 80 characters long"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.def)
			var de *DefinitionError
			if !errors.As(err, &de) {
				t.Fatalf("err = %v", err)
			}
			if !strings.HasPrefix(err.Error(), "Invalid State Machine Definition: '") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %s\nwant it to contain %q", err, tt.want)
			}
		})
	}
}

// Features outside what sfnlocal runs are refused at create time, naming the feature.
func TestParse_Unsupported(t *testing.T) {
	tests := []struct {
		name, def, want string
	}{
		{"JSONata", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Succeed"}}}`, "The query language 'JSONata' is not supported by sfnlocal at /QueryLanguage"},
		{"JSONata state", `{"StartAt":"A","States":{"A":{"Type":"Pass","QueryLanguage":"JSONata","End":true}}}`, "at /States/A/QueryLanguage"},
		{"Distributed Map ItemReader", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemReader":{"Resource":"arn:aws:states:::s3:getObject"},"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Succeed"}}},"End":true}}}`, "The field 'ItemReader' (Distributed Map) is not supported by sfnlocal at /States/M/ItemReader"},
		{"Distributed mode", `{"StartAt":"M","States":{"M":{"Type":"Map","ItemProcessor":{"ProcessorConfig":{"Mode":"DISTRIBUTED"},"StartAt":"I","States":{"I":{"Type":"Succeed"}}},"End":true}}}`, "Distributed Map (Mode DISTRIBUTED) is not supported by sfnlocal at /States/M/ItemProcessor/ProcessorConfig/Mode"},
		{"other integration", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage","End":true}}}`, "The service integration 'sqs:sendMessage' is not supported by sfnlocal"},
		{".sync", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","End":true}}}`, "The '.sync' integration pattern is not supported by sfnlocal"},
		{"activity", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:us-east-1:1:activity:a","End":true}}}`, "Activities are not supported by sfnlocal"},
		{"SDK integration", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::aws-sdk:s3:listBuckets","End":true}}}`, "is not supported by sfnlocal"},
		{"variables", `{"StartAt":"A","States":{"A":{"Type":"Pass","Assign":{"x":1},"End":true}}}`, "The field 'Assign' (workflow variables) is not supported by sfnlocal at /States/A/Assign"},
		{"jitter", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","Retry":[{"ErrorEquals":["X"],"JitterStrategy":"FULL"}],"End":true}}}`, "The JitterStrategy 'FULL' is not supported by sfnlocal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.def)
			if err == nil || !strings.Contains(err.Error(), "UNSUPPORTED_FEATURE") || !strings.Contains(err.Error(), tt.want) {
				t.Errorf("err = %v\nwant it to contain %q", err, tt.want)
			}
		})
	}
}
