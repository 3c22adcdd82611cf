package asl

import (
	"errors"
	"os"
	"strings"
	"testing"
)

// validDefinition uses every feature sfnlocal implements.
const validDefinition = `{
  "Comment": "every implemented feature",
  "StartAt": "Invoke",
  "Version": "1.0",
  "States": {
    "Invoke": {"Type": "Task", "Comment": "c", "Resource": "arn:aws:states:::lambda:invoke",
      "Parameters": {"FunctionName": "engine", "Payload": {"id.$": "$.id", "exec.$": "$$.Execution.Id", "all.$": "$"}},
      "Retry": [{"ErrorEquals": ["Lambda.ServiceException"], "MaxAttempts": 2, "IntervalSeconds": 1, "BackoffRate": 2.0, "MaxDelaySeconds": 30}, {"ErrorEquals": ["States.ALL"]}],
      "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.error", "Next": "Failed"}], "OutputPath": "$.Payload", "Next": "Approve"},
    "Approve": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke.waitForTaskToken",
      "Parameters": {"FunctionName": "arn:aws:lambda:us-east-1:123456789012:function:notify:live", "Payload": {"token.$": "$$.Task.Token"}},
      "TimeoutSecondsPath": "$.timeoutSeconds", "ResultPath": "$.resumed", "Next": "Route"},
    "Route": {"Type": "Choice", "Comment": "c", "Choices": [
      {"Variable": "$.verdict", "StringEquals": "done", "Next": "Done"},
      {"Variable": "$.verdict", "StringEquals": "again", "Comment": "c", "Next": "Invoke"}], "Default": "Sleep"},
    "Sleep": {"Type": "Wait", "TimestampPath": "$.waitUntil", "Next": "Invoke"},
    "Done": {"Type": "Succeed"},
    "Failed": {"Type": "Fail", "Error": "E", "Cause": "failed"}
  }
}`

func TestParse_Valid(t *testing.T) {
	d, err := Parse(validDefinition)
	if err != nil {
		t.Fatal(err)
	}
	if d.StartAt != "Invoke" || len(d.States) != 6 {
		t.Errorf("parsed %+v", d)
	}
	if r := d.States["Invoke"].Retry[1]; r.IntervalSeconds != 1 || r.MaxAttempts != 3 || r.BackoffRate != 2.0 {
		t.Errorf("retrier defaults: %+v", r)
	}
	if k := d.States["Approve"].Resource.Kind; k != ResourceLambdaInvokeWaitForTaskToken {
		t.Errorf("kind = %v", k)
	}
}

// The definition that sfnlocal exists for parses.
func TestParse_RolloutDefinition(t *testing.T) {
	def, err := os.ReadFile("../../../statemachines/rollout.asl.json")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := Parse(string(def)); err != nil {
		t.Fatal(err)
	}
}

// Each invalid definition is refused naming the state (location) and the field.
func TestParse_Invalid(t *testing.T) {
	const task = `"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"}`
	tests := []struct {
		name, def, want string
	}{
		{name: "not JSON", def: `{`, want: "INVALID_JSON_DESCRIPTION"},
		{name: "missing States", def: `{"StartAt":"A"}`, want: "These fields are required: [States] at /"},
		{name: "missing StartAt target", def: `{"StartAt":"B","States":{"A":{"Type":"Succeed"}}}`, want: "MISSING_TRANSITION_TARGET: Missing 'Next' target: B at /StartAt"},
		{name: "missing Next target", def: `{"StartAt":"A","States":{"A":{` + task + `,"Next":"Nope"}}}`, want: "Missing 'Next' target: Nope at /States/A/Next"},
		{name: "missing Catch target", def: `{"StartAt":"A","States":{"A":{` + task + `,"Catch":[{"ErrorEquals":["States.ALL"],"Next":"X"}],"End":true}}}`, want: "Missing 'Next' target: X at /States/A/Catch/0/Next"},
		{name: "unknown field", def: `{"StartAt":"A","States":{"A":{` + task + `,"Foo":1,"End":true}}}`, want: "The field 'Foo' is not supported by Step Functions at /States/A"},
		{name: "unknown top-level field", def: `{"StartAt":"A","Foo":1,"States":{"A":{"Type":"Succeed"}}}`, want: "The field 'Foo' is not supported by Step Functions at /"},
		{name: "both Next and End", def: `{"StartAt":"A","States":{"A":{` + task + `,"Next":"B","End":true},"B":{"Type":"Succeed"}}}`, want: "Only one of 'Next' or 'End' can be present at /States/A"},
		{name: "neither Next nor End", def: `{"StartAt":"A","States":{"A":{` + task + `}}}`, want: "Either 'Next' or 'End' is required at /States/A"},
		{name: "unreachable", def: `{"StartAt":"A","States":{"A":{"Type":"Succeed"},"B":{"Type":"Succeed"}}}`, want: "UNREACHABLE_STATE: State \"B\" is not reachable at /States/B"},
		{name: "bad type", def: `{"StartAt":"A","States":{"A":{"Type":"Nope"}}}`, want: "SCHEMA_VALIDATION_FAILED: The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map] at /States/A/Type"},
		{name: "bad OutputPath", def: `{"StartAt":"A","States":{"A":{` + task + `,"OutputPath":"foo","End":true}}}`, want: "The value for the field 'OutputPath' must be a valid Reference Path: a path must start with '$' at /States/A/OutputPath"},
		{name: "context ResultPath", def: `{"StartAt":"A","States":{"A":{` + task + `,"ResultPath":"$$.a","End":true}}}`, want: "at /States/A/ResultPath"},
		{name: "bad Parameters", def: `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","x.$":"nope"},"End":true}}}`, want: "The value for the field 'x.$' must be a valid JSONPath or a valid intrinsic function call at /States/A/Parameters"},
		{name: "Wait without TimestampPath", def: `{"StartAt":"A","States":{"A":{"Type":"Wait","End":true}}}`, want: "These fields are required: [TimestampPath] at /States/A"},
		{name: "Choice with End", def: `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","StringEquals":"x","Next":"B"}],"End":true},"B":{"Type":"Succeed"}}}`, want: "The field 'End' is not supported by Step Functions at /States/A"},
		{name: "Choice rule without Next", def: `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","StringEquals":"x"}],"Default":"B"},"B":{"Type":"Succeed"}}}`, want: "These fields are required: [Next] at /States/A/Choices/0"},
		{name: "Choice bad operand", def: `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","StringEquals":1,"Next":"B"}]},"B":{"Type":"Succeed"}}}`, want: "The value for the field 'StringEquals' must be a STRING at /States/A/Choices/0/StringEquals"},
		{name: "Choice without operator", def: `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","Next":"B"}]},"B":{"Type":"Succeed"}}}`, want: "A Choice Rule must have a comparison operator at /States/A/Choices/0"},
		{name: "Choice unknown operator", def: `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","StringIs":"x","Next":"B"}]},"B":{"Type":"Succeed"}}}`, want: "The field 'StringIs' is not supported by Step Functions at /States/A/Choices/0"},
		{name: "Task without Resource", def: `{"StartAt":"A","States":{"A":{"Type":"Task","End":true}}}`, want: "These fields are required: [Resource] at /States/A"},
		{name: "invoke without FunctionName", def: `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"Payload":{}},"End":true}}}`, want: "The field 'FunctionName' is required but was missing at /States/A/Parameters"},
		{name: "invoke unknown parameter", def: `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Bogus":1},"End":true}}}`, want: "The field 'Bogus' is not supported by Step Functions at /States/A/Parameters"},
		{name: "waitForTaskToken without token", def: `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"f"},"End":true}}}`, want: "$$.Task.Token"},
		{name: "Retry States.ALL not last", def: `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["States.ALL"]},{"ErrorEquals":["X"]}],"End":true}}}`, want: "at /States/A/Retry/0/ErrorEquals"},
		{name: "Retry bad BackoffRate", def: `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["X"],"BackoffRate":0.5}],"End":true}}}`, want: "at /States/A/Retry/0/BackoffRate"},
		{name: "Retry bad MaxDelaySeconds", def: `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["X"],"MaxDelaySeconds":0}],"End":true}}}`, want: "at /States/A/Retry/0/MaxDelaySeconds"},
		{name: "unknown States error", def: `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["States.Nope"]}],"End":true}}}`, want: "'States.Nope' is not a predefined error name at /States/A/Retry/0/ErrorEquals/0"},
		{name: "no terminal state", def: `{"StartAt":"A","States":{"A":{"Type":"Wait","TimestampPath":"$.t","Next":"A"}}}`, want: "NO_TERMINAL_STATE"},
		{name: "long state name", def: `{"StartAt":"` + strings.Repeat("a", 81) + `","States":{"` + strings.Repeat("a", 81) + `":{"Type":"Succeed"}}}`, want: "State names must be 1 to 80 characters long"},
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
			if strings.Contains(err.Error(), codeUnsupported) {
				t.Errorf("an invalid definition refused as unimplemented: %s", err)
			}
		})
	}
}

// A definition valid on the service that uses a feature sfnlocal does not implement is
// refused at create time: an UNSUPPORTED_FEATURE problem naming the feature and the
// state, and nothing else (no follow-up problems about the refused state).
func TestParse_Unimplemented(t *testing.T) {
	const task = `"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"}`
	choice := func(rule string) string {
		return `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[` + rule + `],"Default":"D"},"D":{"Type":"Succeed"}}}`
	}
	tests := []struct {
		name, def, want string
	}{
		{name: "Map", def: `{"StartAt":"Fan out","States":{"Fan out":{"Type":"Map","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Succeed"}}},"Next":"Done"},"Done":{"Type":"Succeed"}}}`,
			want: `state "Fan out": Type "Map" is not implemented by sfnlocal (it implements: Task, Wait, Choice, Succeed, Fail) at /States/Fan out/Type`},
		{name: "Parallel", def: `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"B","States":{"B":{"Type":"Succeed"}}}],"End":true}}}`,
			want: `state "P": Type "Parallel" is not implemented by sfnlocal`},
		{name: "Pass", def: `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"End":true}}}`, want: `state "P": Type "Pass" is not implemented by sfnlocal`},
		{name: "intrinsic function", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"msg.$":"States.Format('Hello {}', $.name)"}},"End":true}}}`,
			want: `state "T": Parameters field 'msg.$': intrinsic function States.Format is not implemented by sfnlocal at /States/T/Parameters`},
		{name: "intrinsic JsonToString", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload.$":"States.JsonToString($)"},"End":true}}}`,
			want: `intrinsic function States.JsonToString is not implemented by sfnlocal`},
		{name: "wildcard in Parameters", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"ids.$":"$.items[*].id"}},"End":true}}}`,
			want: `state "T": Parameters field 'ids.$': JSONPath wildcards ('.*', '[*]') is not implemented by sfnlocal`},
		{name: "filter in OutputPath", def: `{"StartAt":"T","States":{"T":{` + task + `,"OutputPath":"$.a[?(@.ok)]","End":true}}}`,
			want: `state "T": OutputPath: JSONPath filters ('[?(...)]') is not implemented by sfnlocal`},
		{name: "InputPath", def: `{"StartAt":"T","States":{"T":{` + task + `,"InputPath":"$.in","End":true}}}`,
			want: `state "T": field 'InputPath' is not implemented by sfnlocal at /States/T/InputPath`},
		{name: "InputPath of a Choice", def: `{"StartAt":"C","States":{"C":{"Type":"Choice","InputPath":"$.in","Choices":[{"Variable":"$.a","StringEquals":"x","Next":"D"}],"Default":"D"},"D":{"Type":"Succeed"}}}`,
			want: `state "C": field 'InputPath' is not implemented by sfnlocal at /States/C/InputPath`},
		{name: "bracket notation", def: `{"StartAt":"T","States":{"T":{` + task + `,"OutputPath":"$['a b']","End":true}}}`,
			want: `state "T": OutputPath: JSONPath bracket notation and array indexes ("$['a b']", '$.a[0]') is not implemented by sfnlocal (it implements names in dot notation: $.a.b) at /States/T/OutputPath`},
		{name: "array index in a Variable", def: choice(`{"Variable":"$.a[0]","StringEquals":"x","Next":"D"}`), want: `state "C": Variable: JSONPath bracket notation and array indexes`},
		{name: "array index in Parameters", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"id.$":"$.ids[0]"}},"End":true}}}`,
			want: `state "T": Parameters field 'id.$': JSONPath bracket notation and array indexes`},
		{name: "array in Parameters", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"ids":[{"id.$":"$.id"}]}},"End":true}}}`,
			want: `state "T": Parameters field 'ids': an array in a payload template is not implemented by sfnlocal at /States/T/Parameters`},
		{name: "context field", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"name.$":"$$.Execution.Name"}},"End":true}}}`,
			want: `state "T": Parameters field 'name.$': the context object path $$.Execution.Name is not implemented by sfnlocal (it implements $$.Execution.Id and $$.Task.Token)`},
		{name: "context State", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"n.$":"$$.State.RetryCount"}},"End":true}}}`,
			want: `the context object path $$.State.RetryCount is not implemented by sfnlocal`},
		{name: "Qualifier", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Qualifier":"live"},"End":true}}}`,
			want: `state "T": lambda:invoke parameter 'Qualifier' is not implemented by sfnlocal (it implements FunctionName and Payload) at /States/T/Parameters/Qualifier`},
		{name: "InvocationType Event", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","InvocationType":"Event"},"End":true}}}`,
			want: `state "T": lambda:invoke parameter 'InvocationType' is not implemented by sfnlocal`},
		{name: "InvocationType DryRun", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","InvocationType.$":"$.type"},"End":true}}}`,
			want: `state "T": lambda:invoke parameter 'InvocationType.$' is not implemented by sfnlocal`},
		{name: "ClientContext", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","ClientContext":"e30="},"End":true}}}`,
			want: `state "T": lambda:invoke parameter 'ClientContext' is not implemented by sfnlocal`},
		{name: "LogType", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","LogType":"Tail"},"End":true}}}`,
			want: `state "T": lambda:invoke parameter 'LogType' is not implemented by sfnlocal`},
		{name: "recursive descent in OutputPath", def: `{"StartAt":"T","States":{"T":{` + task + `,"OutputPath":"$..id","End":true}}}`, want: `state "T": OutputPath: JSONPath recursive descent`},
		{name: "slice in ResultPath", def: `{"StartAt":"T","States":{"T":{` + task + `,"ResultPath":"$.a[1:2]","End":true}}}`, want: `state "T": ResultPath: JSONPath slices`},
		{name: "negative index in a Variable", def: choice(`{"Variable":"$.a[-1]","StringEquals":"x","Next":"D"}`), want: `state "C": Variable: JSONPath negative indexes`},
		{name: "StringMatches", def: choice(`{"Variable":"$.a","StringMatches":"log-*","Next":"D"}`),
			want: `state "C": Choice operator StringMatches is not implemented by sfnlocal (it implements: StringEquals) at /States/C/Choices/0/StringMatches`},
		{name: "And", def: choice(`{"And":[{"Variable":"$.a","StringEquals":"x"}],"Next":"D"}`), want: `state "C": Choice operator And is not implemented by sfnlocal (it implements: StringEquals) at /States/C/Choices/0/And`},
		{name: "Or", def: choice(`{"Or":[{"Variable":"$.a","StringEquals":"x"}],"Next":"D"}`), want: `state "C": Choice operator Or is not implemented by sfnlocal`},
		{name: "Not", def: choice(`{"Not":{"Variable":"$.a","StringEquals":"x"},"Next":"D"}`), want: `state "C": Choice operator Not is not implemented by sfnlocal`},
		{name: "NumericEquals", def: choice(`{"Variable":"$.a","NumericEquals":1,"Next":"D"}`), want: `state "C": Choice operator NumericEquals is not implemented by sfnlocal (it implements: StringEquals)`},
		{name: "NumericEqualsPath", def: choice(`{"Variable":"$.a","NumericEqualsPath":"$.b","Next":"D"}`), want: `Choice operator NumericEqualsPath is not implemented`},
		{name: "BooleanEquals", def: choice(`{"Variable":"$.a","BooleanEquals":true,"Next":"D"}`), want: `state "C": Choice operator BooleanEquals is not implemented by sfnlocal`},
		{name: "IsPresent", def: choice(`{"Variable":"$.a","IsPresent":true,"Next":"D"}`), want: `state "C": Choice operator IsPresent is not implemented by sfnlocal`},
		{name: "StringEqualsPath", def: choice(`{"Variable":"$.a","StringEqualsPath":"$.b","Next":"D"}`), want: `Choice operator StringEqualsPath is not implemented`},
		{name: "TimestampGreaterThan", def: choice(`{"Variable":"$.a","TimestampGreaterThan":"2016-03-14T01:59:00Z","Next":"D"}`), want: `Choice operator TimestampGreaterThan is not implemented`},
		{name: "IsNull", def: choice(`{"Variable":"$.a","IsNull":true,"Next":"D"}`), want: `Choice operator IsNull is not implemented`},
		{name: "ResultSelector", def: `{"StartAt":"T","States":{"T":{` + task + `,"ResultSelector":{"p.$":"$.Payload"},"End":true}}}`,
			want: `state "T": field 'ResultSelector' is not implemented by sfnlocal at /States/T/ResultSelector`},
		{name: "TimeoutSeconds", def: `{"StartAt":"T","States":{"T":{` + task + `,"TimeoutSeconds":30,"End":true}}}`, want: `state "T": field 'TimeoutSeconds' is not implemented by sfnlocal`},
		{name: "HeartbeatSeconds", def: `{"StartAt":"T","States":{"T":{` + task + `,"HeartbeatSeconds":30,"End":true}}}`, want: `state "T": field 'HeartbeatSeconds' is not implemented by sfnlocal`},
		{name: "execution TimeoutSeconds", def: `{"StartAt":"S","TimeoutSeconds":60,"States":{"S":{"Type":"Succeed"}}}`, want: `UNSUPPORTED_FEATURE: field 'TimeoutSeconds' is not implemented by sfnlocal at /TimeoutSeconds`},
		{name: "Wait Seconds", def: `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":10,"End":true}}}`,
			want: `state "W": field 'Seconds' (a Wait implements TimestampPath) is not implemented by sfnlocal at /States/W/Seconds`},
		{name: "Fail CausePath", def: `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"E","CausePath":"$.cause"}}}`, want: `state "F": field 'CausePath' (a Fail implements Cause) is not implemented`},
		{name: "Lambda function ARN", def: `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","End":true}}}`,
			want: `state "T": the Lambda function ARN resource arn:aws:lambda:us-east-1:1:function:f is not implemented by sfnlocal (use arn:aws:states:::lambda:invoke)`},
		{name: "other integration", def: `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage","End":true}}}`, want: "the service integration 'sqs:sendMessage' is not implemented by sfnlocal"},
		{name: ".sync", def: `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","End":true}}}`, want: "the '.sync' integration pattern is not implemented by sfnlocal"},
		{name: "activity", def: `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:us-east-1:1:activity:a","End":true}}}`, want: "activities are not implemented by sfnlocal"},
		{name: "SDK integration", def: `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::aws-sdk:s3:listBuckets","End":true}}}`, want: "is not implemented by sfnlocal"},
		{name: "JSONata", def: `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Succeed"}}}`, want: "the query language 'JSONata' is not implemented by sfnlocal at /QueryLanguage"},
		{name: "JSONata state", def: `{"StartAt":"A","States":{"A":{"Type":"Succeed","QueryLanguage":"JSONata"}}}`, want: `state "A": the query language 'JSONata' is not implemented by sfnlocal at /States/A/QueryLanguage`},
		{name: "variables", def: `{"StartAt":"A","States":{"A":{` + task + `,"Assign":{"x":1},"End":true}}}`, want: `state "A": field 'Assign' (workflow variables) is not implemented by sfnlocal at /States/A/Assign`},
		{name: "jitter FULL", def: `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["X"],"JitterStrategy":"FULL"}],"End":true}}}`, want: `state "A": field 'JitterStrategy' is not implemented by sfnlocal at /States/A/Retry/0/JitterStrategy`},
		{name: "jitter NONE", def: `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["X"],"JitterStrategy":"NONE"}],"End":true}}}`, want: `state "A": field 'JitterStrategy' is not implemented by sfnlocal at /States/A/Retry/0/JitterStrategy`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse(tt.def)
			var de *DefinitionError
			if !errors.As(err, &de) || !strings.Contains(err.Error(), "UNSUPPORTED_FEATURE: ") || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("err = %v\nwant it to contain %q", err, tt.want)
			}
			if len(de.Problems) != 1 {
				t.Errorf("%d problems, want the refusal alone: %s", len(de.Problems), err)
			}
		})
	}
}
