package sfnlocal

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/sfnlocal/asl"
)

// add is a Lambda handler that adds val1 and val2.
func add(_ context.Context, in any) (any, error) {
	m := in.(map[string]any)
	a, _ := m["val1"].(json.Number).Int64()
	b, _ := m["val2"].(json.Number).Int64()
	return a + b, nil
}

// The specification's path processing example on lambda:invoke, without InputPath:
// Parameters build the Invoke request, ResultPath places the Invoke response and
// OutputPath selects from it.
func TestPathProcessing_SpecExample(t *testing.T) {
	tests := []struct {
		name, fields, want string
	}{
		{name: "ResultPath OutputPath", fields: `"Parameters":{"FunctionName":"add","Payload.$":"$.numbers"},"ResultPath":"$.sum","OutputPath":"$.sum.Payload"`, want: `7`},
		{name: "ResultPath keeps the input", fields: `"Parameters":{"FunctionName":"add","Payload.$":"$.numbers"},"ResultPath":"$.sum.Payload","OutputPath":"$.numbers"`, want: `{"val1":3,"val2":4}`},
		{name: "ResultPath null", fields: `"Parameters":{"FunctionName":"add","Payload.$":"$.numbers"},"ResultPath":null`, want: `{"title":"Numbers to add","numbers":{"val1":3,"val2":4}}`},
		{name: "default ResultPath", fields: `"Parameters":{"FunctionName":"add","Payload.$":"$.numbers"},"OutputPath":"$.Payload"`, want: `7`},
		{name: "Parameters at depth", fields: `"Parameters":{"FunctionName":"add","Payload":{"val1.$":"$.numbers.val2","val2":10}},"OutputPath":"$.Payload"`, want: `14`},
		{name: "OutputPath null", fields: `"Parameters":{"FunctionName":"add","Payload.$":"$.numbers"},"OutputPath":null`, want: `{}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.lambda("add", add)
			def := `{"StartAt":"Add","States":{"Add":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",` + tt.fields + `,"End":true}}}`
			h.run(def, `{"title":"Numbers to add","numbers":{"val1":3,"val2":4}}`).wantOutput(t, tt.want)
		})
	}
}

// The context object ($$) in Parameters, as the rollout state machine passes
// $$.Execution.Id; numbers keep their text through a state.
func TestContextObject(t *testing.T) {
	h := newHarness(t)
	h.lambda("echo", func(_ context.Context, in any) (any, error) { return in, nil })
	def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","OutputPath":"$.Payload","End":true,
	  "Parameters":{"FunctionName":"echo","Payload":{"exec.$":"$$.Execution.Id","n.$":"$.n"}}}}}`
	name := "ctx"
	out, err := h.s.createStateMachine(&createStateMachineInput{Name: &name, Definition: &def, RoleArn: strPtr(testRole)})
	if err != nil {
		t.Fatal(err)
	}
	arn := out.(createStateMachineOutput).StateMachineArn
	ex, err := h.s.startExecution(&startExecutionInput{StateMachineArn: &arn, Name: strPtr("run"), Input: strPtr(`{"a":1,"n":0.0}`)})
	if err != nil {
		t.Fatal(err)
	}
	r := h.drive(ex.(startExecutionOutput).ExecutionArn)
	r.wantOutput(t, `{"exec":"`+ex.(startExecutionOutput).ExecutionArn+`","n":0.0}`)
	if got := *r.events[len(r.events)-1].details.(executionSucceededDetails).Output; !strings.Contains(got, `"n":0.0`) {
		t.Errorf("output text = %s", got)
	}
}

// Routes on StringEquals, the operator sfnlocal implements, as "What next?" routes on
// the verdict; each route ends in a Fail state named after it.
func TestChoice(t *testing.T) {
	def := `{"StartAt":"Route","States":{
	  "Route":{"Type":"Choice","Choices":[
	    {"Variable":"$.verdict","StringEquals":"wait_health","Next":"Health wait"},
	    {"Variable":"$.verdict","StringEquals":"done","Next":"Done"}],
	   "Default":"DefaultState"},
	  "Health wait":{"Type":"Fail","Error":"HealthWait"},
	  "Done":{"Type":"Fail","Error":"Done"},
	  "DefaultState":{"Type":"Fail","Error":"DefaultStateError","Cause":"No Matches!"}}}`
	tests := []struct {
		input, want string
	}{
		{input: `{"verdict":"wait_health"}`, want: "HealthWait"},
		{input: `{"verdict":"done"}`, want: "Done"},
		{input: `{"verdict":"Done"}`, want: "DefaultStateError"}, // case matters
		{input: `{"verdict":1}`, want: "DefaultStateError"},      // mismatched types compare false
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			h := newHarness(t)
			r := h.run(def, tt.input)
			r.wantError(t, statusFailed, tt.want)
			if got := r.types()[1:3]; got[0] != "ChoiceStateEntered" || got[1] != "ChoiceStateExited" {
				t.Errorf("events %v", r.types())
			}
		})
	}
}

func TestChoice_Errors(t *testing.T) {
	h := newHarness(t)
	noMatch := `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.a","StringEquals":"x","Next":"D"}]},"D":{"Type":"Succeed"}}}`
	r := h.run(noMatch, `{"a":"y"}`)
	r.wantError(t, statusFailed, asl.ErrorNoChoiceMatched)
	r = h.run(noMatch, `{"b":2}`)
	r.wantError(t, statusFailed, asl.ErrorRuntime)
	if !strings.Contains(r.cause, "Invalid path '$.a'") {
		t.Errorf("cause = %s", r.cause)
	}
}

func TestWait(t *testing.T) {
	tests := []struct {
		name, input string
		want        time.Duration // from start to end
		err         string
	}{
		{name: "TimestampPath", input: `{"until":"2025-03-01T12:30:00+00:00"}`, want: 30 * time.Minute, err: ""},
		{name: "fractional seconds are truncated, as the service does", input: `{"until":"2025-03-02T12:00:00.500Z"}`, want: 24 * time.Hour, err: ""},
		{name: "in the past", input: `{"until":"2020-01-01T00:00:00Z"}`, want: 0, err: ""},
		{name: "missing", input: `{}`, want: 0, err: "The TimestampPath parameter does not reference an input value: $.until"},
		{name: "invalid", input: `{"until":"2016-12-05T21:29:29"}`, want: 0, err: "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.until == 2016-12-05T21:29:29"},
		{name: "not a string", input: `{"until":{"at":1}}`, want: 0, err: "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.until == {at=1}"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r := h.run(`{"StartAt":"W","States":{"W":{"Type":"Wait","TimestampPath":"$.until","End":true}}}`, tt.input)
			if tt.err != "" {
				r.wantError(t, statusFailed, asl.ErrorRuntime)
				want := "An error occurred while executing the state 'W' (entered at the event id #2). " + tt.err
				if r.cause != want {
					t.Errorf("cause = %q\nwant    %q", r.cause, want)
				}
				return
			}
			r.wantOutput(t, tt.input)
			if got := r.events[len(r.events)-1].Timestamp.Sub(t0); got != tt.want {
				t.Errorf("waited %v, want %v", got, tt.want)
			}
			if got := r.types(); strings.Join(got, ",") != "ExecutionStarted,WaitStateEntered,WaitStateExited,ExecutionSucceeded" {
				t.Errorf("events %v", got)
			}
		})
	}
}

type MyError struct{ msg string }

func (e *MyError) Error() string { return e.msg }

type ValueError struct{}

func (ValueError) Error() string { return "value error" }

// Retry back-off on the fake clock: IntervalSeconds × BackoffRate^(n-1), capped by
// MaxDelaySeconds; the defaults are 1 second, 3 attempts, rate 2.
func TestRetry_Backoff(t *testing.T) {
	tests := []struct {
		name, retry string
		failures    int
		want        []time.Duration // attempt start times after t0
		status      string
	}{
		{name: "defaults", retry: `[{"ErrorEquals":["MyError"]}]`, failures: 3, want: []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second}, status: statusSucceeded},
		{name: "BackoffRate", retry: `[{"ErrorEquals":["MyError"],"IntervalSeconds":3,"BackoffRate":1.5,"MaxAttempts":3}]`, failures: 3, want: []time.Duration{0, 3 * time.Second, 7500 * time.Millisecond, 14250 * time.Millisecond}, status: statusSucceeded},
		{name: "MaxDelaySeconds", retry: `[{"ErrorEquals":["States.ALL"],"IntervalSeconds":10,"BackoffRate":3,"MaxAttempts":4,"MaxDelaySeconds":60}]`, failures: 4, want: []time.Duration{0, 10 * time.Second, 40 * time.Second, 100 * time.Second, 160 * time.Second}, status: statusSucceeded},
		{name: "exhausted", retry: `[{"ErrorEquals":["States.TaskFailed"],"MaxAttempts":2}]`, failures: 5, want: []time.Duration{0, 1 * time.Second, 3 * time.Second}, status: statusFailed},
		{name: "MaxAttempts 0", retry: `[{"ErrorEquals":["MyError"],"MaxAttempts":0}]`, failures: 1, want: []time.Duration{0}, status: statusFailed},
		{name: "no match", retry: `[{"ErrorEquals":["Other"]}]`, failures: 1, want: []time.Duration{0}, status: statusFailed},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			var calls int32
			h.lambda("flaky", func(context.Context, any) (any, error) {
				if int(atomic.AddInt32(&calls, 1)) <= tt.failures {
					return nil, &MyError{"not yet"}
				}
				return "ok", nil
			})
			r := h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"flaky"},"OutputPath":"$.Payload","Retry":`+tt.retry+`,"End":true}}}`, `{}`)
			if r.status != tt.status {
				t.Fatalf("status %s (%s), want %s", r.status, r.err, tt.status)
			}
			var got []time.Duration
			for _, e := range r.find("TaskScheduled") {
				got = append(got, e.Timestamp.Sub(t0))
			}
			if fmt.Sprint(got) != fmt.Sprint(tt.want) {
				t.Errorf("attempts at %v, want %v", got, tt.want)
			}
			if tt.status == statusFailed && r.err != "MyError" {
				t.Errorf("error = %s", r.err)
			}
		})
	}
}

// Function errors carry the Go type name as errorType, like aws-lambda-go, and Catch
// with ResultPath keeps the input and adds {"Error", "Cause"}.
func TestCatch_LambdaErrors(t *testing.T) {
	tests := []struct {
		name      string
		err       error
		panicWith any
		wantName  string
		wantCause string
	}{
		{name: "pointer type", err: &MyError{"boom"}, panicWith: nil, wantName: "MyError", wantCause: `{"errorMessage":"boom","errorType":"MyError"}`},
		{name: "value type", err: ValueError{}, panicWith: nil, wantName: "ValueError", wantCause: `{"errorMessage":"value error","errorType":"ValueError"}`},
		{name: "errors.New", err: errors.New("plain"), panicWith: nil, wantName: "errorString", wantCause: `{"errorMessage":"plain","errorType":"errorString"}`},
		{name: "wrapped", err: fmt.Errorf("ctx: %w", &MyError{"x"}), panicWith: nil, wantName: "wrapError", wantCause: `{"errorMessage":"ctx: x","errorType":"wrapError"}`},
		{name: "panic", err: nil, panicWith: "kaputt", wantName: "string", wantCause: `{"errorMessage":"kaputt","errorType":"string"}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.lambda("fails", func(context.Context, any) (any, error) {
				if tt.panicWith != nil {
					panic(tt.panicWith)
				}
				return nil, tt.err
			})
			def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"fails"},
			  "Catch":[{"ErrorEquals":["` + tt.wantName + `"],"ResultPath":"$.error","Next":"Handled"}],"End":true},
			  "Handled":{"Type":"Succeed"}}}`
			r := h.run(def, `{"keep":true}`)
			r.wantOutput(t, `{"keep":true,"error":{"Error":"`+tt.wantName+`","Cause":`+asl.Encode(tt.wantCause)+`}}`)
		})
	}
}

func TestLambda_NamesAndNotFound(t *testing.T) {
	h := newHarness(t)
	h.s.RegisterLambda("arn:aws:lambda:us-east-1:123456789012:function:engine:live", func(_ context.Context, in json.RawMessage) (json.RawMessage, error) {
		return json.RawMessage(`"engine"`), nil
	})
	for _, fn := range []string{"engine", "engine:live", "arn:aws:lambda:us-east-1:123456789012:function:engine", "arn:aws:lambda:us-east-1:123456789012:function:engine:7", "123456789012:function:engine"} {
		r := h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"`+fn+`"},"OutputPath":"$.Payload","End":true}}}`, `{}`)
		r.wantOutput(t, `"engine"`)
	}
	r := h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"missing"},"End":true}}}`, `{}`)
	r.wantError(t, statusFailed, "Lambda.ResourceNotFoundException")
	if !strings.HasPrefix(r.cause, "Function not found: arn:aws:lambda:us-east-1:123456789012:function:missing:$LATEST (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException;") {
		t.Errorf("cause = %s", r.cause)
	}
}

// The lambda:invoke result wrapper and its history events.
func TestLambda_InvokeShapes(t *testing.T) {
	h := newHarness(t)
	h.lambda("echo", func(_ context.Context, in any) (any, error) { return in, nil })
	r := h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"echo","Payload":{"x.$":"$.x"}},"End":true}}}`, `{"x":1}`)
	if r.status != statusSucceeded {
		t.Fatalf("status %s", r.status)
	}
	out := r.output.(map[string]any)
	if !asl.Equal(out["Payload"], mustJSON(t, `{"x":1}`)) || out["StatusCode"] != json.Number("200") || out["ExecutedVersion"] != "$LATEST" {
		t.Errorf("wrapper = %s", asl.Encode(out))
	}
	if _, ok := out["SdkHttpMetadata"].(map[string]any)["HttpHeaders"]; !ok {
		t.Errorf("wrapper = %s", asl.Encode(out))
	}
	if got := strings.Join(r.types(), ","); got != "ExecutionStarted,TaskStateEntered,TaskScheduled,TaskStarted,TaskSucceeded,TaskStateExited,ExecutionSucceeded" {
		t.Errorf("events %s", got)
	}
	sched := r.find("TaskScheduled")[0].details.(taskScheduledDetails)
	if sched.ResourceType != "lambda" || sched.Resource != "invoke" || sched.Region != "us-east-1" || sched.Parameters != `{"FunctionName":"echo","Payload":{"x":1}}` {
		t.Errorf("TaskScheduled = %+v", sched)
	}
	for i, e := range r.events {
		if e.ID != int64(i+1) {
			t.Errorf("event %d has id %d", i, e.ID)
		}
	}
	if r.events[1].Prev != 0 || r.events[2].Prev != 2 || r.events[6].Prev != 6 {
		t.Errorf("previousEventId: %d %d %d", r.events[1].Prev, r.events[2].Prev, r.events[6].Prev)
	}

}

// StopExecution aborts a running task: the handler's context is cancelled (a handler
// blocked in AwaitCancel does not keep WaitIdle waiting).
func TestStopExecution_CancelsHandler(t *testing.T) {
	h := newHarness(t)
	cancelled := make(chan struct{})
	h.lambda("slow", func(ctx context.Context, _ any) (any, error) {
		err := AwaitCancel(ctx)
		close(cancelled)
		return nil, err
	})
	arn := h.start(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"slow"},"End":true}}}`, `{}`)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if err := h.s.WaitIdle(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := h.s.stopExecution(&stopExecutionInput{ExecutionArn: &arn, Error: strPtr("Stop")}); err != nil {
		t.Fatal(err)
	}
	<-cancelled
	r := h.result(arn)
	r.wantError(t, statusAborted, "Stop")
	if got := r.types(); got[len(got)-1] != "ExecutionAborted" {
		t.Errorf("events %v", got)
	}
}

func TestFail(t *testing.T) {
	tests := []struct {
		state, err, cause string
	}{
		{state: `{"Type":"Fail","Error":"ErrorA","Cause":"Kaiju attack"}`, err: "ErrorA", cause: "Kaiju attack"},
		{state: `{"Type":"Fail","Error":"Rollout.RolledBack"}`, err: "Rollout.RolledBack", cause: ""},
	}
	for _, tt := range tests {
		h := newHarness(t)
		r := h.run(`{"StartAt":"F","States":{"F":`+tt.state+`}}`, `{}`)
		r.wantError(t, statusFailed, tt.err)
		if r.cause != tt.cause {
			t.Errorf("cause = %q, want %q", r.cause, tt.cause)
		}
	}
}

// A path that selects nothing fails the execution with States.Runtime, which no Catch
// handles, as on the service.
func TestRuntimeErrors(t *testing.T) {
	tests := []struct {
		name, fields, cause string
	}{
		{name: "OutputPath", fields: `"Parameters":{"FunctionName":"f"},"OutputPath":"$.no.such.result.path"`, cause: "Invalid path '$.no.such.result.path' : Missing property in path $['no']"},
		{name: "Parameters", fields: `"Parameters":{"FunctionName":"f","Payload":{"value.$":"$.no_such_jsonpath"}}`, cause: "The JSONPath '$.no_such_jsonpath' specified for the field 'value.$' could not be found in the input '{}'"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.lambda("f", func(context.Context, any) (any, error) { return map[string]any{}, nil })
			r := h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke",`+tt.fields+`,
			  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Succeed"}}}`, `{}`)
			r.wantError(t, statusFailed, asl.ErrorRuntime)
			want := "An error occurred while executing the state 'T' (entered at the event id #2). " + tt.cause
			if r.cause != want {
				t.Errorf("cause = %q\nwant    %q", r.cause, want)
			}
		})
	}
}

func TestResultPathMatchFailure(t *testing.T) {
	h := newHarness(t)
	h.lambda("f", func(context.Context, any) (any, error) { return 1, nil })
	r := h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"f"},"ResultPath":"$.a.b","End":true}}}`, `{"a":"text"}`)
	r.wantError(t, statusFailed, asl.ErrorResultPathMatchFailure)
}
