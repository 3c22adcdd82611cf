package sfnlocal

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/sfnlocal/asl"
)

var t0 = time.Date(2025, 3, 1, 12, 0, 0, 0, time.UTC)

const testRole = "arn:aws:iam::123456789012:role/sfn"

// harness runs definitions on a Server with a fake clock, without HTTP.
type harness struct {
	t   *testing.T
	s   *Server
	clk *FakeClock
	n   int
}

func newHarness(t *testing.T) *harness {
	clk := NewFakeClock(t0)
	s := New(Options{Clock: clk})
	t.Cleanup(s.Close)
	return &harness{t: t, s: s, clk: clk}
}

func (h *harness) lambda(name string, f func(ctx context.Context, in any) (any, error)) {
	h.s.RegisterLambda(name, func(ctx context.Context, payload json.RawMessage) (json.RawMessage, error) {
		in, err := asl.Decode(payload)
		if err != nil {
			return nil, err
		}
		out, err := f(ctx, in)
		if err != nil {
			return nil, err
		}
		return json.Marshal(out)
	})
}

// result is a finished (or parked) execution.
type result struct {
	arn    string
	status string
	output any
	err    string
	cause  string
	events []*event
}

func (r *result) types() []string {
	var out []string
	for _, e := range r.events {
		out = append(out, e.Type)
	}
	return out
}

func (r *result) find(typ string) []*event {
	var out []*event
	for _, e := range r.events {
		if e.Type == typ {
			out = append(out, e)
		}
	}
	return out
}

// start creates a state machine and starts an execution with input.
func (h *harness) start(def, input string) string {
	h.t.Helper()
	h.n++
	name := "sm" + string(rune('a'+h.n))
	out, err := h.s.createStateMachine(&createStateMachineInput{Name: &name, Definition: &def, RoleArn: strPtr(testRole)})
	if err != nil {
		h.t.Fatalf("create: %v", err)
	}
	arn := out.(createStateMachineOutput).StateMachineArn
	ex, err := h.s.startExecution(&startExecutionInput{StateMachineArn: &arn, Input: &input})
	if err != nil {
		h.t.Fatalf("start: %v", err)
	}
	return ex.(startExecutionOutput).ExecutionArn
}

// run starts an execution and drives the fake clock until it ends or parks.
func (h *harness) run(def, input string) *result {
	h.t.Helper()
	return h.drive(h.start(def, input))
}

func (h *harness) drive(arn string) *result {
	h.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, err := h.s.Drive(ctx, h.clk, arn); err != nil {
		h.t.Fatalf("drive: %v", err)
	}
	return h.result(arn)
}

func (h *harness) result(arn string) *result {
	e, err := h.s.lookupExecution(arn)
	if err != nil {
		h.t.Fatal(err)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	r := &result{arn: arn, status: e.status, events: append([]*event(nil), e.events...)}
	if e.output != nil {
		r.output, _ = asl.Decode([]byte(*e.output))
	}
	if e.errName != nil {
		r.err = *e.errName
	}
	if e.cause != nil {
		r.cause = *e.cause
	}
	return r
}

func mustJSON(t *testing.T, s string) any {
	t.Helper()
	v, err := asl.Decode([]byte(s))
	if err != nil {
		t.Fatalf("decode %s: %v", s, err)
	}
	return v
}

func (r *result) wantOutput(t *testing.T, want string) {
	t.Helper()
	if r.status != statusSucceeded {
		t.Fatalf("status = %s (%s: %s), want SUCCEEDED; events %v", r.status, r.err, r.cause, r.types())
	}
	if !asl.Equal(r.output, mustJSON(t, want)) {
		t.Errorf("output = %s, want %s", asl.Encode(r.output), want)
	}
}

func (r *result) wantError(t *testing.T, status, name string) {
	t.Helper()
	if r.status != status || r.err != name {
		t.Fatalf("status = %s, error = %s (%s), want %s %s; events %v", r.status, r.err, r.cause, status, name, r.types())
	}
}
