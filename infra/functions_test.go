package main

import (
	"os"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// The app deploys exactly the main packages of functions/.
func TestFunctions_MatchTheFunctionsDirectory(t *testing.T) {
	entries, err := os.ReadDir("../functions")
	if err != nil {
		t.Fatalf("functions/: %v (every Lambda of infra/functions.go needs its main package there)", err)
	}
	var dirs, listed []string
	for _, e := range entries {
		if e.IsDir() {
			dirs = append(dirs, e.Name())
		}
	}
	for _, f := range functionSpecs {
		listed = append(listed, f.Name)
	}
	sort.Strings(dirs)
	sort.Strings(listed)
	if !reflect.DeepEqual(dirs, listed) {
		t.Errorf("functions/ holds %v, infra/functions.go deploys %v", dirs, listed)
	}
}

func TestSubstitutionKey(t *testing.T) {
	tests := []struct{ function, key string }{
		{function: "engine", key: "EngineFunctionArn"},          // one word
		{function: "agent-event", key: "AgentEventFunctionArn"}, // dashes become camel case
		{function: "api", key: "ApiFunctionArn"},                // CloudFormation-style capitalisation, not API
	}
	for _, tt := range tests {
		if got := substitutionKey(tt.function); got != tt.key {
			t.Errorf("substitutionKey(%q) = %q, want %q", tt.function, got, tt.key)
		}
	}
}

func TestTaskFunctions(t *testing.T) {
	tests := []struct {
		asl  string
		want map[string]string
		err  string
	}{
		{asl: `{"a":"${EngineFunctionArn}","b":"${EngineFunctionArn}"}`, want: map[string]string{"EngineFunctionArn": fnEngine}, err: ""}, // named twice, mapped once
		{asl: `{"a":"${EngineFunctionArn}","b":"${PlannerFunctionArn}"}`, want: map[string]string{"EngineFunctionArn": fnEngine, "PlannerFunctionArn": fnPlanner}, err: ""},
		{asl: `{"a":"${ExecutorFunctionArn}"}`, want: nil, err: "${ExecutorFunctionArn}"}, // a task Lambda the app lacks
		{asl: `{"a":"${TableName}"}`, want: nil, err: "${TableName}"},                     // not a function at all
		{asl: `{"a":"$.path"}`, want: map[string]string{}, err: ""},                       // JSONPath is no placeholder
	}
	for _, tt := range tests {
		got, err := taskFunctions([]byte(tt.asl))
		if tt.err != "" {
			if err == nil || !strings.Contains(err.Error(), tt.err) {
				t.Errorf("%s: error %v, want one naming %s", tt.asl, err, tt.err)
			}
			continue
		}
		if err != nil || !reflect.DeepEqual(got, tt.want) {
			t.Errorf("%s: %v %v, want %v", tt.asl, got, err, tt.want)
		}
	}
}

// Every Lambda the state machine names exists in the app (the ASL's
// ${...FunctionArn} placeholders), and every function of the app is
// invoked by something: the state machine, the schedule, the stream, or
// API Gateway. A function nothing calls, or a task nothing deploys, fails.
func TestFunctions_StateMachineAndAppAgree(t *testing.T) {
	asl, err := os.ReadFile(filepath.Join("..", rolloutDefinition))
	if err != nil {
		t.Fatal(err)
	}
	tasks, err := taskFunctions(asl)
	if err != nil {
		t.Fatal(err)
	}
	if len(tasks) == 0 {
		t.Fatalf("%s names no function", rolloutDefinition)
	}
	s := synthesized(t, nil)
	invoked := map[string]string{} // logical id -> by what
	for _, sm := range s.ofType("AWS::StepFunctions::StateMachine") {
		for _, id := range refs(sm.Properties["DefinitionSubstitutions"]) {
			invoked[id] = "the state machine"
		}
	}
	for _, r := range s.ofType("AWS::Events::Rule") {
		for _, id := range refs(r.Properties["Targets"]) {
			invoked[id] = "a schedule"
		}
	}
	for _, m := range s.ofType("AWS::Lambda::EventSourceMapping") {
		for _, id := range refs(m.Properties["FunctionName"]) {
			invoked[id] = "a stream"
		}
	}
	for _, m := range s.ofType("AWS::ApiGateway::Method") {
		for _, id := range refs(m.Properties["Integration"]) {
			invoked[id] = "API Gateway"
		}
	}
	for _, a := range s.ofType("AWS::ApiGateway::Authorizer") {
		for _, id := range refs(a.Properties["AuthorizerUri"]) {
			invoked[id] = "the authorizer"
		}
	}
	for _, f := range functionSpecs {
		id, _ := s.function(t, f.Name)
		if invoked[id] == "" {
			t.Errorf("nothing invokes %s", f.Name)
		}
	}
	for key, name := range tasks {
		id, _ := s.function(t, name)
		if invoked[id] != "the state machine" {
			t.Errorf("%s names %s, which the deployed state machine does not invoke", key, name)
		}
	}
}

// Every state machine in statemachines/ is deployed.
func TestStateMachines_AllDeployed(t *testing.T) {
	files, err := filepath.Glob("../statemachines/*.asl.json")
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range files {
		if filepath.Join("..", rolloutDefinition) != f {
			t.Errorf("%s is not deployed by infra/statemachine.go", f)
		}
	}
}
