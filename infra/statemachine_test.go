package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

func TestStateMachine_IsTheFileWithTheEngineSubstituted(t *testing.T) {
	s := synthesized(t, nil)
	sms := s.ofType("AWS::StepFunctions::StateMachine")
	if len(sms) != 1 {
		t.Fatalf("%d state machines, want 1", len(sms))
	}
	engineID, _ := s.function(t, fnEngine)
	for _, sm := range sms {
		p := sm.Properties
		loc := p["DefinitionS3Location"].(map[string]any)
		staged, err := os.ReadFile(filepath.Join(s.outdir, fileAssets(t, s)[strings.TrimSuffix(fmt.Sprint(loc["Key"]), ".json")]))
		if err != nil {
			t.Fatal(err)
		}
		source, err := os.ReadFile(filepath.Join("..", rolloutDefinition))
		if err != nil {
			t.Fatal(err)
		}
		if string(staged) != string(source) {
			t.Errorf("the deployed definition is not %s byte for byte", rolloutDefinition)
		}
		subs := p["DefinitionSubstitutions"].(map[string]any)
		want := map[string]any{"EngineFunctionArn": map[string]any{"Fn::GetAtt": []any{engineID, "Arn"}}}
		if !reflect.DeepEqual(subs, want) {
			t.Errorf("substitutions %v, want %v", subs, want)
		}
		// After substitution the definition is valid JSON in which every
		// task invokes the engine, as Step Functions will see it.
		const engineArn = "arn:aws:lambda:eu-west-1:123456789012:function:myriarch-test-engine"
		var def struct {
			States map[string]struct {
				Type       string
				Parameters struct{ FunctionName string }
			}
		}
		if err := json.Unmarshal([]byte(strings.ReplaceAll(string(source), "${EngineFunctionArn}", engineArn)), &def); err != nil {
			t.Fatalf("definition after substitution: %v", err)
		}
		tasks := 0
		for name, st := range def.States {
			if st.Type == "Task" {
				tasks++
				if st.Parameters.FunctionName != engineArn {
					t.Errorf("state %q invokes %q, want the engine", name, st.Parameters.FunctionName)
				}
			}
		}
		if tasks == 0 {
			t.Error("no Task state in the definition")
		}
		checks := []struct {
			field     string
			got, want any
		}{
			{field: "name", got: p["StateMachineName"], want: "myriarch-test-rollout"},
			{field: "type", got: p["StateMachineType"], want: "STANDARD"},
			{field: "tracing", got: p["TracingConfiguration"], want: map[string]any{"Enabled": true}},
			{field: "log level", got: p["LoggingConfiguration"].(map[string]any)["Level"], want: "ALL"},
			{field: "execution data", got: p["LoggingConfiguration"].(map[string]any)["IncludeExecutionData"], want: true},
		}
		for _, c := range checks {
			if !reflect.DeepEqual(c.got, c.want) {
				t.Errorf("%s = %v, want %v", c.field, c.got, c.want)
			}
		}
	}
}

// The engine and the planner find the state machine by an ARN built from
// its name (no reference, no cycle): it must be the deployed one's.
func TestStateMachine_ArnGivenToFunctionsIsTheDeployedOne(t *testing.T) {
	s := synthesized(t, nil)
	want := "arn:{AWS::Partition}:states:{AWS::Region}:{AWS::AccountId}:stateMachine:myriarch-test-rollout"
	for _, f := range functionSpecs {
		_, r := s.function(t, f.Name)
		got, has := env(r.Properties)[envStateMachineArn]
		if needs := f.StartExecution || f.SendTaskResponse; needs != has || (has && flatten(got) != want) {
			t.Errorf("%s: %s = %v (needs it: %v), want %s", f.Name, envStateMachineArn, flatten(got), needs, want)
		}
	}
}
