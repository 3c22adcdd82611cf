package enginetask

import (
	"bytes"
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"
)

// TestGolden_TaskPayloadsRoundTrip: the payloads the state machine sends and
// the state the tasks return decode into the task types and encode back
// unchanged, so a renamed field cannot slip through.
func TestGolden_TaskPayloadsRoundTrip(t *testing.T) {
	for _, c := range []struct {
		file string
		v    any
	}{
		{"evaluate.input.json", &Input{}},
		{"park.input.json", &Input{}},
		{"record-failure.input.json", &Input{}},
		{"evaluate.output.json", &Output{}},
	} {
		raw, err := os.ReadFile("testdata/" + c.file)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(raw))
		dec.DisallowUnknownFields()
		if err := dec.Decode(c.v); err != nil {
			t.Fatalf("%s: %v", c.file, err)
		}
		back, _ := json.Marshal(c.v)
		var want, got any
		_ = json.Unmarshal(raw, &want)
		_ = json.Unmarshal(back, &got)
		if !reflect.DeepEqual(want, got) {
			t.Errorf("%s does not round-trip:\n got %s", c.file, back)
		}
	}
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
