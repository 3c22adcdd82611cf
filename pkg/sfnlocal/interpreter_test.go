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

	"github.com/myriarch/myriarch/pkg/sfnlocal/asl"
)

// The specification's path processing example: InputPath selects the numbers, the
// task's result is placed by ResultPath and OutputPath selects it.
func TestPathProcessing_SpecExample(t *testing.T) {
	tests := []struct {
		name, fields, want string
	}{
		{"InputPath ResultPath OutputPath", `"InputPath":"$.numbers","ResultPath":"$.sum","OutputPath":"$.sum"`, `7`},
		{"ResultPath only", `"InputPath":"$.numbers","ResultPath":"$.sum"`, `{"title":"Numbers to add","numbers":{"val1":3,"val2":4},"sum":7}`},
		{"ResultPath null", `"InputPath":"$.numbers","ResultPath":null`, `{"title":"Numbers to add","numbers":{"val1":3,"val2":4}}`},
		{"default ResultPath", `"InputPath":"$.numbers"`, `7`},
		{"Parameters", `"Parameters":{"val1.$":"$.numbers.val2","val2":10},"ResultPath":"$.sum","OutputPath":"$.sum"`, `14`},
		{"ResultSelector", `"InputPath":"$.numbers","ResultSelector":{"total.$":"$","doubled.$":"States.MathAdd($, $)"},"ResultPath":"$.sum","OutputPath":"$.sum"`, `{"total":7,"doubled":14}`},
		{"OutputPath null", `"InputPath":"$.numbers","OutputPath":null`, `{}`},
		{"InputPath null", `"InputPath":null,"Parameters":{"val1":1,"val2":1}`, `2`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.lambda("add", func(_ context.Context, in any) (any, error) {
				m := in.(map[string]any)
				a, _ := m["val1"].(json.Number).Int64()
				b, _ := m["val2"].(json.Number).Int64()
				return a + b, nil
			})
			def := `{"StartAt":"Add","States":{"Add":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:add",` + tt.fields + `,"End":true}}}`
			h.run(def, `{"title":"Numbers to add","numbers":{"val1":3,"val2":4}}`).wantOutput(t, tt.want)
		})
	}
}

func TestPass(t *testing.T) {
	tests := []struct {
		name, state, input, want string
	}{
		{"passes input", `{"Type":"Pass","End":true}`, `{"a":1}`, `{"a":1}`},
		{"Result with ResultPath", `{"Type":"Pass","Result":{"x-datum":0.381018,"y-datum":622.2269926397355},"ResultPath":"$.coords","End":true}`,
			`{"georefOf":"Home"}`, `{"georefOf":"Home","coords":{"x-datum":0.381018,"y-datum":622.2269926397355}}`},
		{"Parameters with context", `{"Type":"Pass","Parameters":{"name.$":"$$.State.Name","exec.$":"$$.Execution.Name","machine.$":"$$.StateMachine.Name","input.$":"$$.Execution.Input.a","start.$":"$$.Execution.StartTime","entered.$":"$$.State.EnteredTime"},"End":true}`,
			`{"a":1}`, `{"name":"P","exec":"run","machine":"smb","input":1,"start":"2025-03-01T12:00:00.000Z","entered":"2025-03-01T12:00:00.000Z"}`},
		{"numbers keep their text", `{"Type":"Pass","End":true}`, `{"a":0.0,"b":1.10}`, `{"a":0.0,"b":1.10}`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			def := `{"StartAt":"P","States":{"P":` + tt.state + `}}`
			name := "sm" + string(rune('a'+1))
			out, err := h.s.createStateMachine(&createStateMachineInput{Name: &name, Definition: &def, RoleArn: strPtr(testRole)})
			if err != nil {
				t.Fatal(err)
			}
			arn := out.(createStateMachineOutput).StateMachineArn
			ex, err := h.s.startExecution(&startExecutionInput{StateMachineArn: &arn, Name: strPtr("run"), Input: &tt.input})
			if err != nil {
				t.Fatal(err)
			}
			r := h.drive(ex.(startExecutionOutput).ExecutionArn)
			r.wantOutput(t, tt.want)
			if tt.name == "numbers keep their text" && *r.events[len(r.events)-1].details.(executionSucceededDetails).Output != `{"a":0.0,"b":1.10}` {
				t.Errorf("output text = %s", *r.events[len(r.events)-1].details.(executionSucceededDetails).Output)
			}
		})
	}
}

func TestChoice(t *testing.T) {
	// The specification's Choice example.
	def := `{"StartAt":"Route","States":{
	  "Route":{"Type":"Choice","Choices":[
	    {"Not":{"Variable":"$.type","StringEquals":"Private"},"Next":"Public"},
	    {"Variable":"$.value","IsPresent":false,"Next":"NoValue"},
	    {"And":[{"Variable":"$.value","NumericGreaterThanEquals":20},{"Variable":"$.value","NumericLessThan":30}],"Next":"ValueInTwenties"}],
	   "Default":"DefaultState"},
	  "Public":{"Type":"Pass","Result":"Public","End":true},
	  "NoValue":{"Type":"Pass","Result":"NoValue","End":true},
	  "ValueInTwenties":{"Type":"Pass","Result":"ValueInTwenties","End":true},
	  "DefaultState":{"Type":"Fail","Error":"DefaultStateError","Cause":"No Matches!"}}}`
	tests := []struct {
		input, want, err string
	}{
		{`{"type":"Public","value":22}`, `"Public"`, ""},
		{`{"type":"Private"}`, `"NoValue"`, ""},
		{`{"type":"Private","value":22}`, `"ValueInTwenties"`, ""},
		{`{"type":"Private","value":35}`, ``, "DefaultStateError"},
	}
	for _, tt := range tests {
		t.Run(tt.input, func(t *testing.T) {
			h := newHarness(t)
			r := h.run(def, tt.input)
			if tt.err != "" {
				r.wantError(t, statusFailed, tt.err)
				return
			}
			r.wantOutput(t, tt.want)
			if got := r.types()[1:3]; got[0] != "ChoiceStateEntered" || got[1] != "ChoiceStateExited" {
				t.Errorf("events %v", r.types())
			}
		})
	}
}

func TestChoice_Errors(t *testing.T) {
	h := newHarness(t)
	noMatch := `{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$.a","NumericEquals":1,"Next":"D"}]},"D":{"Type":"Succeed"}}}`
	r := h.run(noMatch, `{"a":2}`)
	r.wantError(t, statusFailed, asl.ErrorNoChoiceMatched)
	r = h.run(noMatch, `{"b":2}`)
	r.wantError(t, statusFailed, asl.ErrorRuntime)
	if !strings.Contains(r.cause, "Invalid path '$.a'") {
		t.Errorf("cause = %s", r.cause)
	}
}

func TestWait(t *testing.T) {
	tests := []struct {
		name, state, input string
		want               time.Duration // from start to end
		err                string
	}{
		{"Seconds", `{"Type":"Wait","Seconds":90,"End":true}`, `{}`, 90 * time.Second, ""},
		{"SecondsPath", `{"Type":"Wait","SecondsPath":"$.delay","End":true}`, `{"delay":3600}`, time.Hour, ""},
		{"Timestamp", `{"Type":"Wait","Timestamp":"2025-03-02T12:00:00Z","End":true}`, `{}`, 24 * time.Hour, ""},
		{"TimestampPath", `{"Type":"Wait","TimestampPath":"$.until","End":true}`, `{"until":"2025-03-01T12:30:00+00:00"}`, 30 * time.Minute, ""},
		{"Timestamp in the past", `{"Type":"Wait","TimestampPath":"$.until","End":true}`, `{"until":"2020-01-01T00:00:00Z"}`, 0, ""},
		{"SecondsPath missing", `{"Type":"Wait","SecondsPath":"$.delay","End":true}`, `{}`, 0, "The SecondsPath parameter does not reference an input value: $.delay"},
		{"SecondsPath fraction", `{"Type":"Wait","SecondsPath":"$.delay","End":true}`, `{"delay":1.5}`, 0, "The SecondsPath parameter cannot be parsed as a long value: $.delay == 1.5"},
		{"SecondsPath negative", `{"Type":"Wait","SecondsPath":"$.delay","End":true}`, `{"delay":-1}`, 0, "The SecondsPath parameter references a negative value: $.delay == -1"},
		{"TimestampPath invalid", `{"Type":"Wait","TimestampPath":"$.until","End":true}`, `{"until":"2016-12-05T21:29:29"}`, 0, "The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: $.until == 2016-12-05T21:29:29"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r := h.run(`{"StartAt":"W","States":{"W":`+tt.state+`}}`, tt.input)
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
		{"defaults", `[{"ErrorEquals":["MyError"]}]`, 3, []time.Duration{0, 1 * time.Second, 3 * time.Second, 7 * time.Second}, statusSucceeded},
		{"BackoffRate", `[{"ErrorEquals":["MyError"],"IntervalSeconds":3,"BackoffRate":1.5,"MaxAttempts":3}]`, 3, []time.Duration{0, 3 * time.Second, 7500 * time.Millisecond, 14250 * time.Millisecond}, statusSucceeded},
		{"MaxDelaySeconds", `[{"ErrorEquals":["States.ALL"],"IntervalSeconds":10,"BackoffRate":3,"MaxAttempts":4,"MaxDelaySeconds":60}]`, 4, []time.Duration{0, 10 * time.Second, 40 * time.Second, 100 * time.Second, 160 * time.Second}, statusSucceeded},
		{"exhausted", `[{"ErrorEquals":["States.TaskFailed"],"MaxAttempts":2}]`, 5, []time.Duration{0, 1 * time.Second, 3 * time.Second}, statusFailed},
		{"MaxAttempts 0", `[{"ErrorEquals":["MyError"],"MaxAttempts":0}]`, 1, []time.Duration{0}, statusFailed},
		{"no match", `[{"ErrorEquals":["Other"]}]`, 1, []time.Duration{0}, statusFailed},
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
		{"pointer type", &MyError{"boom"}, nil, "MyError", `{"errorMessage":"boom","errorType":"MyError"}`},
		{"value type", ValueError{}, nil, "ValueError", `{"errorMessage":"value error","errorType":"ValueError"}`},
		{"errors.New", errors.New("plain"), nil, "errorString", `{"errorMessage":"plain","errorType":"errorString"}`},
		{"wrapped", fmt.Errorf("ctx: %w", &MyError{"x"}), nil, "wrapError", `{"errorMessage":"ctx: x","errorType":"wrapError"}`},
		{"panic", nil, "kaputt", "string", `{"errorMessage":"kaputt","errorType":"string"}`},
	}
	for _, tt := range tests {
		for _, resource := range []string{"arn:aws:states:::lambda:invoke", "arn:aws:lambda:us-east-1:123456789012:function:fails"} {
			t.Run(tt.name+" "+resource, func(t *testing.T) {
				h := newHarness(t)
				h.lambda("fails", func(context.Context, any) (any, error) {
					if tt.panicWith != nil {
						panic(tt.panicWith)
					}
					return nil, tt.err
				})
				params := ""
				if strings.Contains(resource, "states") {
					params = `"Parameters":{"FunctionName":"fails"},`
				}
				def := `{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"` + resource + `",` + params + `
				  "Catch":[{"ErrorEquals":["` + tt.wantName + `"],"ResultPath":"$.error","Next":"Handled"}],"End":true},
				  "Handled":{"Type":"Pass","End":true}}}`
				r := h.run(def, `{"keep":true}`)
				r.wantOutput(t, `{"keep":true,"error":{"Error":"`+tt.wantName+`","Cause":`+asl.Encode(tt.wantCause)+`}}`)
			})
		}
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
	r = h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:missing","End":true}}}`, `{}`)
	r.wantError(t, statusFailed, "Lambda.ResourceNotFoundException")
}

// The lambda:invoke result wrapper and the history events of both Lambda forms.
func TestLambda_InvokeShapes(t *testing.T) {
	h := newHarness(t)
	h.lambda("echo", func(_ context.Context, in any) (any, error) { return in, nil })
	r := h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"echo","Payload":{"x.$":"$.x"}},"TimeoutSeconds":30,"End":true}}}`, `{"x":1}`)
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
	if sched.ResourceType != "lambda" || sched.Resource != "invoke" || sched.Region != "us-east-1" || sched.Parameters != `{"FunctionName":"echo","Payload":{"x":1}}` || *sched.TimeoutInSeconds != 30 {
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

	r = h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:echo","End":true}}}`, `{"x":1}`)
	r.wantOutput(t, `{"x":1}`)
	if got := strings.Join(r.types(), ","); got != "ExecutionStarted,TaskStateEntered,LambdaFunctionScheduled,LambdaFunctionStarted,LambdaFunctionSucceeded,TaskStateExited,ExecutionSucceeded" {
		t.Errorf("events %s", got)
	}
}

// A task that outlives TimeoutSeconds fails with States.Timeout on the fake clock; the
// handler's context is cancelled.
func TestTask_Timeout(t *testing.T) {
	for _, resource := range []string{`"arn:aws:states:::lambda:invoke","Parameters":{"FunctionName":"slow"}`, `"arn:aws:lambda:us-east-1:123456789012:function:slow"`} {
		h := newHarness(t)
		cancelled := make(chan struct{})
		h.lambda("slow", func(ctx context.Context, _ any) (any, error) {
			err := AwaitCancel(ctx)
			close(cancelled)
			return nil, err
		})
		r := h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":`+resource+`,"TimeoutSecondsPath":"$.timeout",
		  "Catch":[{"ErrorEquals":["States.Timeout"],"Next":"Late"}],"End":true},"Late":{"Type":"Pass","End":true}}}`, `{"timeout":300}`)
		r.wantOutput(t, `{"Error":"States.Timeout","Cause":""}`)
		<-cancelled
		if got := r.events[len(r.events)-1].Timestamp.Sub(t0); got != 5*time.Minute {
			t.Errorf("timed out after %v", got)
		}
		if len(r.find("TaskTimedOut"))+len(r.find("LambdaFunctionTimedOut")) != 1 {
			t.Errorf("events %v", r.types())
		}
	}
}

func TestExecution_TimeoutSeconds(t *testing.T) {
	h := newHarness(t)
	r := h.run(`{"StartAt":"W","TimeoutSeconds":60,"States":{"W":{"Type":"Wait","Seconds":3600,"End":true}}}`, `{}`)
	r.wantError(t, statusTimedOut, asl.ErrorTimeout)
	last := r.events[len(r.events)-1]
	if last.Type != "ExecutionTimedOut" || last.Timestamp.Sub(t0) != time.Minute {
		t.Errorf("last event %s at %v", last.Type, last.Timestamp.Sub(t0))
	}
}

func TestFail(t *testing.T) {
	tests := []struct {
		state, input, err, cause string
	}{
		{`{"Type":"Fail","Error":"ErrorA","Cause":"Kaiju attack"}`, `{}`, "ErrorA", "Kaiju attack"},
		{`{"Type":"Fail","ErrorPath":"$.e","CausePath":"$.c"}`, `{"e":"E","c":"C"}`, "E", "C"},
		{`{"Type":"Fail","ErrorPath":"$$.State.Name","CausePath":"States.Format('at {}', $.where)"}`, `{"where":"x"}`, "F", "at x"},
		{`{"Type":"Fail","ErrorPath":"$.ErrorX"}`, `{}`, asl.ErrorRuntime, "An error occurred while executing the state 'F' (entered at the event id #2). The JSONPath '$.ErrorX' specified for the field 'ErrorPath' could not be found in the input '{}'"},
	}
	for _, tt := range tests {
		h := newHarness(t)
		r := h.run(`{"StartAt":"F","States":{"F":`+tt.state+`}}`, tt.input)
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
		{"InputPath", `"InputPath":"$.NoSuchInputPath"`, "Invalid path '$.NoSuchInputPath' : No results for path: $['NoSuchInputPath']"},
		{"OutputPath", `"OutputPath":"$.no.such.result.path"`, "Invalid path '$.no.such.result.path' : Missing property in path $['no']"},
		{"Parameters", `"Parameters":{"value.$":"$.no_such_jsonpath"}`, "The JSONPath '$.no_such_jsonpath' specified for the field 'value.$' could not be found in the input '{}'"},
		{"TimeoutSecondsPath", `"TimeoutSecondsPath":"$.NoSuchTimeoutSecondsPath"`, "Invalid path '$.NoSuchTimeoutSecondsPath' : No results for path: $['NoSuchTimeoutSecondsPath']"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			h.lambda("f", func(context.Context, any) (any, error) { return map[string]any{}, nil })
			r := h.run(`{"StartAt":"T","States":{"T":{"Type":"Task","Resource":"arn:aws:lambda:us-east-1:123456789012:function:f",`+tt.fields+`,
			  "Catch":[{"ErrorEquals":["States.ALL"],"Next":"C"}],"End":true},"C":{"Type":"Pass","End":true}}}`, `{}`)
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
	r := h.run(`{"StartAt":"P","States":{"P":{"Type":"Pass","Result":1,"ResultPath":"$.a.b","End":true}}}`, `{"a":"text"}`)
	r.wantError(t, statusFailed, asl.ErrorResultPathMatchFailure)
}

func TestParallel(t *testing.T) {
	h := newHarness(t)
	def := `{"StartAt":"P","States":{"P":{"Type":"Parallel","Parameters":{"n.$":"$.n"},"ResultSelector":{"first.$":"$[0]","second.$":"$[1].sum"},"ResultPath":"$.out","End":true,
	  "Branches":[
	    {"StartAt":"Wait","States":{"Wait":{"Type":"Wait","Seconds":10,"Next":"Echo"},"Echo":{"Type":"Pass","End":true}}},
	    {"StartAt":"Add","States":{"Add":{"Type":"Pass","Parameters":{"sum.$":"States.MathAdd($.n, 1)"},"End":true}}}]}}}`
	r := h.run(def, `{"n":41}`)
	r.wantOutput(t, `{"n":41,"out":{"first":{"n":41},"second":42}}`)
	types := strings.Join(r.types(), ",")
	if !strings.Contains(types, "ParallelStateEntered,ParallelStateStarted") || !strings.HasSuffix(types, "ParallelStateSucceeded,ParallelStateExited,ExecutionSucceeded") {
		t.Errorf("events %s", types)
	}
	started := r.find("ParallelStateStarted")[0].ID
	for _, e := range r.find("PassStateEntered") {
		if e.Details() == "Add" && e.Prev != started {
			t.Errorf("branch's first event has previousEventId %d, want %d", e.Prev, started)
		}
	}
}

func (e *event) Details() string {
	if d, ok := e.details.(stateEnteredDetails); ok {
		return d.Name
	}
	return ""
}

// A failing branch fails the Parallel state with the branch's error; the other branches
// are aborted, and Catch handles the error.
func TestParallel_Failure(t *testing.T) {
	h := newHarness(t)
	def := `{"StartAt":"P","States":{"P":{"Type":"Parallel","Catch":[{"ErrorEquals":["FailureType"],"Next":"Caught"}],"End":true,
	  "Branches":[
	    {"StartAt":"Slow","States":{"Slow":{"Type":"Wait","Seconds":100,"End":true}}},
	    {"StartAt":"Pause","States":{"Pause":{"Type":"Wait","Seconds":1,"Next":"Boom"},"Boom":{"Type":"Fail","Error":"FailureType","Cause":"Cause description"}}}]},
	  "Caught":{"Type":"Pass","End":true}}}`
	r := h.run(def, `{}`)
	r.wantOutput(t, `{"Error":"FailureType","Cause":"Cause description"}`)
	if len(r.find("WaitStateAborted")) != 1 || len(r.find("ParallelStateFailed")) != 1 {
		t.Errorf("events %v", r.types())
	}
	if d := r.events[len(r.events)-1].Timestamp.Sub(t0); d != time.Second {
		t.Errorf("the aborted branch delayed the state by %v", d)
	}
}

func TestMap(t *testing.T) {
	tests := []struct {
		name, fields, input, want string
	}{
		{"ItemProcessor", `"ItemsPath":"$.items","ItemProcessor":{"StartAt":"Double","States":{"Double":{"Type":"Pass","Parameters":{"v.$":"States.MathAdd($.v, $.v)"},"End":true}}}`,
			`{"items":[{"v":1},{"v":2},{"v":3}]}`, `[{"v":2},{"v":4},{"v":6}]`},
		{"ItemSelector with context", `"ItemsPath":"$.items","ItemSelector":{"index.$":"$$.Map.Item.Index","value.$":"$$.Map.Item.Value","tag.$":"$.tag"},"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}}`,
			`{"tag":"t","items":["a","b"]}`, `[{"index":0,"value":"a","tag":"t"},{"index":1,"value":"b","tag":"t"}]`},
		{"legacy Iterator and Parameters", `"ItemsPath":"$.items","Parameters":{"x.$":"$$.Map.Item.Value"},"Iterator":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"ResultPath":"$.out"`,
			`{"items":[1,2]}`, `{"items":[1,2],"out":[{"x":1},{"x":2}]}`},
		{"empty", `"ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}}`, `[]`, `[]`},
		{"MaxConcurrency", `"MaxConcurrency":1,"ItemProcessor":{"StartAt":"W","States":{"W":{"Type":"Wait","Seconds":10,"End":true}}}`, `[1,2,3]`, `[1,2,3]`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h := newHarness(t)
			r := h.run(`{"StartAt":"M","States":{"M":{"Type":"Map",`+tt.fields+`,"End":true}}}`, tt.input)
			r.wantOutput(t, tt.want)
			if tt.name == "MaxConcurrency" {
				// One at a time: three waits of ten seconds.
				if d := r.events[len(r.events)-1].Timestamp.Sub(t0); d != 30*time.Second {
					t.Errorf("took %v", d)
				}
			}
			if len(r.find("MapStateStarted")) != 1 || len(r.find("MapStateSucceeded")) != 1 {
				t.Errorf("events %v", r.types())
			}
		})
	}
	h := newHarness(t)
	r := h.run(`{"StartAt":"M","States":{"M":{"Type":"Map","ItemsPath":"$.x","ItemProcessor":{"StartAt":"I","States":{"I":{"Type":"Pass","End":true}}},"End":true}}}`, `{"x":1}`)
	r.wantError(t, statusFailed, asl.ErrorRuntime)
	if r.cause != `Reference path "$.x" must point to array.` {
		t.Errorf("cause = %s", r.cause)
	}
}

func TestMap_IterationFailure(t *testing.T) {
	h := newHarness(t)
	def := `{"StartAt":"M","States":{"M":{"Type":"Map","Retry":[{"ErrorEquals":["HandleItemFailError"],"MaxAttempts":1}],
	  "ItemProcessor":{"StartAt":"C","States":{"C":{"Type":"Choice","Choices":[{"Variable":"$","NumericEquals":3,"Next":"Break"}],"Default":"Ok"},
	    "Ok":{"Type":"Pass","End":true},"Break":{"Type":"Fail","Error":"HandleItemFailError","Cause":"HandleItemFailCause"}}},"End":true}}}`
	r := h.run(def, `[1,2,3]`)
	r.wantError(t, statusFailed, "HandleItemFailError")
	if len(r.find("MapStateStarted")) != 2 || len(r.find("MapIterationFailed")) != 2 || len(r.find("MapStateFailed")) != 1 {
		t.Errorf("events %v", r.types())
	}
}
