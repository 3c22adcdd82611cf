package enginetask

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"sort"
	"strings"
	"testing"
)

// TestGolden_TaskPayloadsRoundTrip: for every task the state machine calls,
// the payload it sends (<task>.input.json) and the state the task returns
// (<task>.output.json) decode into the task types with no unknown field and
// encode back unchanged, so a renamed or retyped field cannot slip through.
// waiting-approval.output.json is the evaluation that parks for approval.
func TestGolden_TaskPayloadsRoundTrip(t *testing.T) {
	files := []string{"waiting-approval.output.json"}
	for _, task := range aslTasks(t) {
		files = append(files, task+".input.json", task+".output.json")
	}
	for _, file := range files {
		var v any = &Output{}
		if strings.HasSuffix(file, ".input.json") {
			v = &Input{}
		}
		raw, err := os.ReadFile("testdata/" + file)
		if err != nil {
			t.Fatalf("every task of the state machine has golden input and output: %v", err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(v); err != nil {
			t.Fatalf("%s: %v", file, err)
		}
		back, _ := json.Marshal(v)
		var want, got any
		_ = json.Unmarshal(raw, &want)
		_ = json.Unmarshal(back, &got)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s does not round-trip:\n got %s", file, back)
		}
	}
}

// TestGolden_InputsAreWhatTheStateMachineSends: each golden input carries
// every key that the task's states put into the payload, and nothing else
// but zero values, so the golden files follow the ASL.
func TestGolden_InputsAreWhatTheStateMachineSends(t *testing.T) {
	for task, keys := range aslPayloadKeys(t) {
		raw, err := os.ReadFile("testdata/" + task + ".input.json")
		if err != nil {
			t.Fatal(err)
		}
		var golden map[string]any
		if err := json.Unmarshal(raw, &golden); err != nil {
			t.Fatal(err)
		}
		for k := range keys {
			if _, ok := golden[k]; !ok {
				t.Errorf("%s.input.json lacks %q, which the state machine sends", task, k)
			}
		}
		for k, v := range golden {
			if !keys[k] && !reflect.ValueOf(v).IsZero() {
				t.Errorf("%s.input.json sets %q = %v, which the state machine never sends", task, k, v)
			}
		}
	}
}

// aslTasks are the task names of the engine's payloads, sorted.
func aslTasks(t *testing.T) []string {
	var out []string
	for task := range aslPayloadKeys(t) {
		out = append(out, task)
	}
	sort.Strings(out)
	return out
}

// aslPayloadKeys maps each task the rollout state machine calls to the
// payload keys its states send (".$" trimmed).
func aslPayloadKeys(t *testing.T) map[string]map[string]bool {
	t.Helper()
	raw, err := os.ReadFile("../../statemachines/rollout.asl.json")
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		States map[string]struct {
			Parameters struct{ Payload map[string]any }
		}
	}
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]bool{}
	for _, st := range def.States {
		task, ok := st.Parameters.Payload["task"].(string)
		if !ok {
			continue
		}
		if out[task] == nil {
			out[task] = map[string]bool{}
		}
		for k := range st.Parameters.Payload {
			out[task][strings.TrimSuffix(k, ".$")] = true
		}
	}
	return out
}

// TestContract_ASLPayloadsAreTaskInputs: every key that a Task state of the
// rollout state machine puts into the engine's payload is a field of Input,
// and every Choice on the engine's output reads a field of Output.
func TestContract_ASLPayloadsAreTaskInputs(t *testing.T) {
	raw, err := os.ReadFile("../../statemachines/rollout.asl.json")
	if err != nil {
		t.Fatal(err)
	}
	var def struct {
		States map[string]struct {
			Type       string
			Parameters struct {
				Payload map[string]any
			}
			Choices []struct{ Variable string }
		}
	}
	if err := json.Unmarshal(raw, &def); err != nil {
		t.Fatal(err)
	}
	inputs, outputs := jsonFields(Input{}), jsonFields(Output{})
	tasks := map[string]bool{TaskPrepare: true, TaskEvaluate: true, TaskPark: true, TaskContinue: true, TaskFinish: true, TaskRecordFailure: true, TaskReadGates: true}
	for name, st := range def.States {
		for key, v := range st.Parameters.Payload {
			field := strings.TrimSuffix(key, ".$")
			if !inputs[field] {
				t.Errorf("state %q sends %q, which Input does not have", name, key)
			}
			if field == "task" && !tasks[v.(string)] {
				t.Errorf("state %q calls task %q, which Handle does not serve", name, v)
			}
		}
		for _, ch := range st.Choices {
			if f := strings.TrimPrefix(ch.Variable, "$."); !outputs[f] {
				t.Errorf("choice %q reads %q, which Output does not have", name, ch.Variable)
			}
		}
	}
}

func jsonFields(v any) map[string]bool {
	out := map[string]bool{}
	rt := reflect.TypeOf(v)
	for i := 0; i < rt.NumField(); i++ {
		name, _, _ := strings.Cut(rt.Field(i).Tag.Get("json"), ",")
		out[name] = true
	}
	return out
}
