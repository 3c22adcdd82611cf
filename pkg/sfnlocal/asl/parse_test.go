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
		{"not JSON", `{`, "INVALID_JSON_DESCRIPTION"},
		{"missing States", `{"StartAt":"A"}`, "These fields are required: [States] at /"},
		{"missing StartAt target", `{"StartAt":"B","States":{"A":{"Type":"Succeed"}}}`, "MISSING_TRANSITION_TARGET: Missing 'Next' target: B at /StartAt"},
		{"missing Next target", `{"StartAt":"A","States":{"A":{` + task + `,"Next":"Nope"}}}`, "Missing 'Next' target: Nope at /States/A/Next"},
		{"missing Catch target", `{"StartAt":"A","States":{"A":{` + task + `,"Catch":[{"ErrorEquals":["States.ALL"],"Next":"X"}],"End":true}}}`, "Missing 'Next' target: X at /States/A/Catch/0/Next"},
		{"unknown field", `{"StartAt":"A","States":{"A":{` + task + `,"Foo":1,"End":true}}}`, "The field 'Foo' is not supported by Step Functions at /States/A"},
		{"unknown top-level field", `{"StartAt":"A","Foo":1,"States":{"A":{"Type":"Succeed"}}}`, "The field 'Foo' is not supported by Step Functions at /"},
		{"both Next and End", `{"StartAt":"A","States":{"A":{` + task + `,"Next":"B","End":true},"B":{"Type":"Succeed"}}}`, "Only one of 'Next' or 'End' can be present at /States/A"},
		{"neither Next nor End", `{"StartAt":"A","States":{"A":{` + task + `}}}`, "Either 'Next' or 'End' is required at /States/A"},
		{"unreachable", `{"StartAt":"A","States":{"A":{"Type":"Succeed"},"B":{"Type":"Succeed"}}}`, "UNREACHABLE_STATE: State \"B\" is not reachable at /States/B"},
		{"bad type", `{"StartAt":"A","States":{"A":{"Type":"Nope"}}}`, "SCHEMA_VALIDATION_FAILED: The field 'Type' should have one of these values: [Task, Wait, Pass, Succeed, Fail, Choice, Parallel, Map] at /States/A/Type"},
		{"bad OutputPath", `{"StartAt":"A","States":{"A":{` + task + `,"OutputPath":"foo","End":true}}}`, "The value for the field 'OutputPath' must be a valid Reference Path: a path must start with '$' at /States/A/OutputPath"},
		{"context ResultPath", `{"StartAt":"A","States":{"A":{` + task + `,"ResultPath":"$$.a","End":true}}}`, "at /States/A/ResultPath"},
		{"bad Parameters", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","x.$":"nope"},"End":true}}}`, "The value for the field 'x.$' must be a valid JSONPath or a valid intrinsic function call at /States/A/Parameters"},
		{"Wait without TimestampPath", `{"StartAt":"A","States":{"A":{"Type":"Wait","End":true}}}`, "These fields are required: [TimestampPath] at /States/A"},
		{"Choice with End", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","StringEquals":"x","Next":"B"}],"End":true},"B":{"Type":"Succeed"}}}`, "The field 'End' is not supported by Step Functions at /States/A"},
		{"Choice rule without Next", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","StringEquals":"x"}],"Default":"B"},"B":{"Type":"Succeed"}}}`, "These fields are required: [Next] at /States/A/Choices/0"},
		{"Choice bad operand", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","StringEquals":1,"Next":"B"}]},"B":{"Type":"Succeed"}}}`, "The value for the field 'StringEquals' must be a STRING at /States/A/Choices/0/StringEquals"},
		{"Choice without operator", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","Next":"B"}]},"B":{"Type":"Succeed"}}}`, "A Choice Rule must have a comparison operator at /States/A/Choices/0"},
		{"Choice unknown operator", `{"StartAt":"A","States":{"A":{"Type":"Choice","Choices":[{"Variable":"$.a","StringIs":"x","Next":"B"}]},"B":{"Type":"Succeed"}}}`, "The field 'StringIs' is not supported by Step Functions at /States/A/Choices/0"},
		{"Task without Resource", `{"StartAt":"A","States":{"A":{"Type":"Task","End":true}}}`, "These fields are required: [Resource] at /States/A"},
		{"invoke without FunctionName", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"Payload":{}},"End":true}}}`, "The field 'FunctionName' is required but was missing at /States/A/Parameters"},
		{"invoke unknown parameter", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Bogus":1},"End":true}}}`, "The field 'Bogus' is not supported by Step Functions at /States/A/Parameters"},
		{"waitForTaskToken without token", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke.waitForTaskToken","Parameters":{"FunctionName":"f"},"End":true}}}`, "$$.Task.Token"},
		{"Retry States.ALL not last", `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["States.ALL"]},{"ErrorEquals":["X"]}],"End":true}}}`, "at /States/A/Retry/0/ErrorEquals"},
		{"Retry bad BackoffRate", `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["X"],"BackoffRate":0.5}],"End":true}}}`, "at /States/A/Retry/0/BackoffRate"},
		{"Retry bad MaxDelaySeconds", `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["X"],"MaxDelaySeconds":0}],"End":true}}}`, "at /States/A/Retry/0/MaxDelaySeconds"},
		{"unknown States error", `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["States.Nope"]}],"End":true}}}`, "'States.Nope' is not a predefined error name at /States/A/Retry/0/ErrorEquals/0"},
		{"no terminal state", `{"StartAt":"A","States":{"A":{"Type":"Wait","TimestampPath":"$.t","Next":"A"}}}`, "NO_TERMINAL_STATE"},
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
		{"Map", `{"StartAt":"Fan out","States":{"Fan out":{"Type":"Map","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Succeed"}}},"Next":"Done"},"Done":{"Type":"Succeed"}}}`,
			`state "Fan out": Type "Map" is not implemented by sfnlocal (it implements: Task, Wait, Choice, Succeed, Fail) at /States/Fan out/Type`},
		{"Parallel", `{"StartAt":"P","States":{"P":{"Type":"Parallel","Branches":[{"StartAt":"B","States":{"B":{"Type":"Succeed"}}}],"End":true}}}`,
			`state "P": Type "Parallel" is not implemented by sfnlocal`},
		{"Pass", `{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"End":true}}}`, `state "P": Type "Pass" is not implemented by sfnlocal`},
		{"intrinsic function", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"msg.$":"States.Format('Hello {}', $.name)"}},"End":true}}}`,
			`state "T": Parameters field 'msg.$': intrinsic function States.Format is not implemented by sfnlocal at /States/T/Parameters`},
		{"intrinsic JsonToString", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload.$":"States.JsonToString($)"},"End":true}}}`,
			`intrinsic function States.JsonToString is not implemented by sfnlocal`},
		{"wildcard in Parameters", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"ids.$":"$.items[*].id"}},"End":true}}}`,
			`state "T": Parameters field 'ids.$': JSONPath wildcards ('.*', '[*]') is not implemented by sfnlocal`},
		{"filter in OutputPath", `{"StartAt":"T","States":{"T":{` + task + `,"OutputPath":"$.a[?(@.ok)]","End":true}}}`,
			`state "T": OutputPath: JSONPath filters ('[?(...)]') is not implemented by sfnlocal`},
		{"InputPath", `{"StartAt":"T","States":{"T":{` + task + `,"InputPath":"$.in","End":true}}}`,
			`state "T": field 'InputPath' is not implemented by sfnlocal at /States/T/InputPath`},
		{"InputPath of a Choice", `{"StartAt":"C","States":{"C":{"Type":"Choice","InputPath":"$.in","Choices":[{"Variable":"$.a","StringEquals":"x","Next":"D"}],"Default":"D"},"D":{"Type":"Succeed"}}}`,
			`state "C": field 'InputPath' is not implemented by sfnlocal at /States/C/InputPath`},
		{"bracket notation", `{"StartAt":"T","States":{"T":{` + task + `,"OutputPath":"$['a b']","End":true}}}`,
			`state "T": OutputPath: JSONPath bracket notation and array indexes ("$['a b']", '$.a[0]') is not implemented by sfnlocal (it implements names in dot notation: $.a.b) at /States/T/OutputPath`},
		{"array index in a Variable", choice(`{"Variable":"$.a[0]","StringEquals":"x","Next":"D"}`), `state "C": Variable: JSONPath bracket notation and array indexes`},
		{"array index in Parameters", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"id.$":"$.ids[0]"}},"End":true}}}`,
			`state "T": Parameters field 'id.$': JSONPath bracket notation and array indexes`},
		{"array in Parameters", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"ids":[{"id.$":"$.id"}]}},"End":true}}}`,
			`state "T": Parameters field 'ids': an array in a payload template is not implemented by sfnlocal at /States/T/Parameters`},
		{"context field", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"name.$":"$$.Execution.Name"}},"End":true}}}`,
			`state "T": Parameters field 'name.$': the context object path $$.Execution.Name is not implemented by sfnlocal (it implements $$.Execution.Id and $$.Task.Token)`},
		{"context State", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Payload":{"n.$":"$$.State.RetryCount"}},"End":true}}}`,
			`the context object path $$.State.RetryCount is not implemented by sfnlocal`},
		{"Qualifier", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","Qualifier":"live"},"End":true}}}`,
			`state "T": lambda:invoke parameter 'Qualifier' is not implemented by sfnlocal (it implements FunctionName and Payload) at /States/T/Parameters/Qualifier`},
		{"InvocationType Event", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","InvocationType":"Event"},"End":true}}}`,
			`state "T": lambda:invoke parameter 'InvocationType' is not implemented by sfnlocal`},
		{"InvocationType DryRun", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","InvocationType.$":"$.type"},"End":true}}}`,
			`state "T": lambda:invoke parameter 'InvocationType.$' is not implemented by sfnlocal`},
		{"ClientContext", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","ClientContext":"e30="},"End":true}}}`,
			`state "T": lambda:invoke parameter 'ClientContext' is not implemented by sfnlocal`},
		{"LogType", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f","LogType":"Tail"},"End":true}}}`,
			`state "T": lambda:invoke parameter 'LogType' is not implemented by sfnlocal`},
		{"recursive descent in OutputPath", `{"StartAt":"T","States":{"T":{` + task + `,"OutputPath":"$..id","End":true}}}`, `state "T": OutputPath: JSONPath recursive descent`},
		{"slice in ResultPath", `{"StartAt":"T","States":{"T":{` + task + `,"ResultPath":"$.a[1:2]","End":true}}}`, `state "T": ResultPath: JSONPath slices`},
		{"negative index in a Variable", choice(`{"Variable":"$.a[-1]","StringEquals":"x","Next":"D"}`), `state "C": Variable: JSONPath negative indexes`},
		{"StringMatches", choice(`{"Variable":"$.a","StringMatches":"log-*","Next":"D"}`),
			`state "C": Choice operator StringMatches is not implemented by sfnlocal (it implements: StringEquals) at /States/C/Choices/0/StringMatches`},
		{"And", choice(`{"And":[{"Variable":"$.a","StringEquals":"x"}],"Next":"D"}`), `state "C": Choice operator And is not implemented by sfnlocal (it implements: StringEquals) at /States/C/Choices/0/And`},
		{"Or", choice(`{"Or":[{"Variable":"$.a","StringEquals":"x"}],"Next":"D"}`), `state "C": Choice operator Or is not implemented by sfnlocal`},
		{"Not", choice(`{"Not":{"Variable":"$.a","StringEquals":"x"},"Next":"D"}`), `state "C": Choice operator Not is not implemented by sfnlocal`},
		{"NumericEquals", choice(`{"Variable":"$.a","NumericEquals":1,"Next":"D"}`), `state "C": Choice operator NumericEquals is not implemented by sfnlocal (it implements: StringEquals)`},
		{"NumericEqualsPath", choice(`{"Variable":"$.a","NumericEqualsPath":"$.b","Next":"D"}`), `Choice operator NumericEqualsPath is not implemented`},
		{"BooleanEquals", choice(`{"Variable":"$.a","BooleanEquals":true,"Next":"D"}`), `state "C": Choice operator BooleanEquals is not implemented by sfnlocal`},
		{"IsPresent", choice(`{"Variable":"$.a","IsPresent":true,"Next":"D"}`), `state "C": Choice operator IsPresent is not implemented by sfnlocal`},
		{"StringEqualsPath", choice(`{"Variable":"$.a","StringEqualsPath":"$.b","Next":"D"}`), `Choice operator StringEqualsPath is not implemented`},
		{"TimestampGreaterThan", choice(`{"Variable":"$.a","TimestampGreaterThan":"2016-03-14T01:59:00Z","Next":"D"}`), `Choice operator TimestampGreaterThan is not implemented`},
		{"IsNull", choice(`{"Variable":"$.a","IsNull":true,"Next":"D"}`), `Choice operator IsNull is not implemented`},
		{"ResultSelector", `{"StartAt":"T","States":{"T":{` + task + `,"ResultSelector":{"p.$":"$.Payload"},"End":true}}}`,
			`state "T": field 'ResultSelector' is not implemented by sfnlocal at /States/T/ResultSelector`},
		{"TimeoutSeconds", `{"StartAt":"T","States":{"T":{` + task + `,"TimeoutSeconds":30,"End":true}}}`, `state "T": field 'TimeoutSeconds' is not implemented by sfnlocal`},
		{"HeartbeatSeconds", `{"StartAt":"T","States":{"T":{` + task + `,"HeartbeatSeconds":30,"End":true}}}`, `state "T": field 'HeartbeatSeconds' is not implemented by sfnlocal`},
		{"execution TimeoutSeconds", `{"StartAt":"S","TimeoutSeconds":60,"States":{"S":{"Type":"Succeed"}}}`, `UNSUPPORTED_FEATURE: field 'TimeoutSeconds' is not implemented by sfnlocal at /TimeoutSeconds`},
		{"Wait Seconds", `{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":10,"End":true}}}`,
			`state "W": field 'Seconds' (a Wait implements TimestampPath) is not implemented by sfnlocal at /States/W/Seconds`},
		{"Fail CausePath", `{"StartAt":"F","States":{"F":{"Type":"Fail","Error":"E","CausePath":"$.cause"}}}`, `state "F": field 'CausePath' (a Fail implements Cause) is not implemented`},
		{"Lambda function ARN", `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:1:function:f","End":true}}}`,
			`state "T": the Lambda function ARN resource arn:aws:lambda:us-east-1:1:function:f is not implemented by sfnlocal (use arn:aws:states:::lambda:invoke)`},
		{"other integration", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::sqs:sendMessage","End":true}}}`, "the service integration 'sqs:sendMessage' is not implemented by sfnlocal"},
		{".sync", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::states:startExecution.sync:2","End":true}}}`, "the '.sync' integration pattern is not implemented by sfnlocal"},
		{"activity", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:us-east-1:1:activity:a","End":true}}}`, "activities are not implemented by sfnlocal"},
		{"SDK integration", `{"StartAt":"A","States":{"A":{"Type":"Task","Resource":"arn:aws:states:::aws-sdk:s3:listBuckets","End":true}}}`, "is not implemented by sfnlocal"},
		{"JSONata", `{"QueryLanguage":"JSONata","StartAt":"A","States":{"A":{"Type":"Succeed"}}}`, "the query language 'JSONata' is not implemented by sfnlocal at /QueryLanguage"},
		{"JSONata state", `{"StartAt":"A","States":{"A":{"Type":"Succeed","QueryLanguage":"JSONata"}}}`, `state "A": the query language 'JSONata' is not implemented by sfnlocal at /States/A/QueryLanguage`},
		{"variables", `{"StartAt":"A","States":{"A":{` + task + `,"Assign":{"x":1},"End":true}}}`, `state "A": field 'Assign' (workflow variables) is not implemented by sfnlocal at /States/A/Assign`},
		{"jitter FULL", `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["X"],"JitterStrategy":"FULL"}],"End":true}}}`, `state "A": field 'JitterStrategy' is not implemented by sfnlocal at /States/A/Retry/0/JitterStrategy`},
		{"jitter NONE", `{"StartAt":"A","States":{"A":{` + task + `,"Retry":[{"ErrorEquals":["X"],"JitterStrategy":"NONE"}],"End":true}}}`, `state "A": field 'JitterStrategy' is not implemented by sfnlocal at /States/A/Retry/0/JitterStrategy`},
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
