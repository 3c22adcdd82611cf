package sfnlocal

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/myriarch/myriarch/pkg/sfnlocal/asl"
)

// task runs one attempt of a Task state.
func (e *execution) task(th *thread, sr *stateRun, rawInput any) (any, *asl.Error) {
	st := sr.st
	afterInputPath, err := selectPath(st.InputPath, rawInput)
	if err != nil {
		return nil, err
	}
	timeout, heartbeat, err := taskTimeouts(st, afterInputPath)
	if err != nil {
		return nil, err
	}
	var tok *taskToken
	if st.Resource.Kind == asl.ResourceLambdaInvokeWaitForTaskToken {
		tok = e.s.newToken(e)
		defer tok.close()
	}
	token := ""
	if tok != nil {
		token = tok.token
	}
	params, err := e.effectiveInput(sr, rawInput, token)
	if err != nil {
		return nil, err
	}
	var result any
	if st.Resource.Kind == asl.ResourceLambdaFunction {
		result, err = e.lambdaFunction(th, st, params, timeout)
	} else {
		result, err = e.lambdaInvoke(th, st, params, timeout, heartbeat, tok)
	}
	if err != nil {
		return nil, err
	}
	return e.finishResult(sr, rawInput, result)
}

// taskTimeouts resolves TimeoutSeconds(Path) and HeartbeatSeconds(Path). Without a
// timeout a task may run as long as the execution (99999999 seconds on the service).
func taskTimeouts(st *asl.State, input any) (timeout, heartbeat *int64, err *asl.Error) {
	read := func(static int64, p *asl.Path, field string) (*int64, *asl.Error) {
		if p != nil {
			n, err := asl.IntegerAt(p, input, field)
			if err != nil {
				return nil, asErr(err)
			}
			return &n, nil
		}
		if static > 0 {
			return &static, nil
		}
		return nil, nil
	}
	if timeout, err = read(st.TimeoutSeconds, st.TimeoutSecondsPath, "TimeoutSecondsPath"); err != nil {
		return nil, nil, err
	}
	heartbeat, err = read(st.HeartbeatSeconds, st.HeartbeatSecondsPath, "HeartbeatSecondsPath")
	return timeout, heartbeat, err
}

func seconds(p *int64) time.Duration {
	if p == nil {
		return 0
	}
	return time.Duration(*p) * time.Second
}

// invocation is the outcome of running a handler.
type invocation struct {
	output   json.RawMessage
	ferr     *functionError
	notFound bool
	reason   wakeReason // wakeDone, or why the task stopped waiting
}

// invoke runs the function's handler in its own goroutine and waits for it, the alarm
// or the scope.
func (e *execution) invoke(th *thread, al *alarm, function string, payload []byte) invocation {
	h, ok := e.s.lambdas.lookup(function)
	if !ok {
		return invocation{notFound: true, reason: wakeDone}
	}
	w := newWakeup(e.s.busy)
	if r := al.arm(w); r != 0 {
		return invocation{reason: r}
	}
	ctx, cancel := context.WithCancel(context.WithValue(th.sc.ctx, busyKey{}, e.s.busy))
	var mu sync.Mutex
	var res invocation
	requestID := asl.NewUUID()
	arn := e.s.lambdaARN(function)
	e.s.busy.add(1)
	go func() {
		defer e.s.busy.add(-1)
		out, ferr := invokeHandler(ctx, h, requestID, arn, payload)
		mu.Lock()
		res.output, res.ferr = out, ferr
		mu.Unlock()
		w.fire(wakeDone)
	}()
	r := th.sc.await(w)
	al.arm(nil)
	if r != wakeDone {
		cancel()
		return invocation{reason: r}
	}
	cancel()
	mu.Lock()
	defer mu.Unlock()
	res.reason = r
	return res
}

// lambdaFunction runs a Task whose Resource is a Lambda function ARN: the effective
// input is the payload and the function's output is the result.
func (e *execution) lambdaFunction(th *thread, st *asl.State, params any, timeout *int64) (any, *asl.Error) {
	payload := asl.Encode(params)
	th.emit("LambdaFunctionScheduled", "lambdaFunctionScheduledEventDetails",
		lambdaScheduledDetails{Resource: st.Resource.ARN, Input: &payload, InputDetails: notTruncated, TimeoutInSeconds: timeout})
	th.emit("LambdaFunctionStarted", "", nil)
	al := newAlarm(e.s.clock, seconds(timeout), 0)
	defer al.stop()
	inv := e.invoke(th, al, st.Resource.ARN, []byte(payload))
	failed := func(err *asl.Error) (any, *asl.Error) {
		th.emit("LambdaFunctionFailed", "lambdaFunctionFailedEventDetails", errorDetails{Error: &err.Name, Cause: &err.Cause})
		return nil, err
	}
	switch {
	case inv.reason == wakeAbort:
		return nil, errAborted
	case inv.reason == wakeTimeout:
		name := asl.ErrorTimeout
		th.emit("LambdaFunctionTimedOut", "lambdaFunctionTimedOutEventDetails", errorDetails{Error: &name})
		return nil, &asl.Error{Name: name}
	case inv.notFound:
		return failed(e.functionNotFound(st.Resource.ARN))
	case inv.ferr != nil:
		return failed(functionFailure(inv.ferr))
	case len(inv.output) > maxPayload:
		return failed(dataLimit(st.Resource.ARN))
	}
	out := string(inv.output)
	result, derr := asl.Decode(inv.output)
	if derr != nil {
		return failed(asl.NewError("Lambda.InvalidResponse", fmt.Sprintf("The function returned invalid JSON: %v", derr)))
	}
	th.emit("LambdaFunctionSucceeded", "lambdaFunctionSucceededEventDetails", lambdaSucceededDetails{Output: &out, OutputDetails: notTruncated})
	return result, nil
}

func functionFailure(f *functionError) *asl.Error {
	cause, _ := json.Marshal(f)
	return asl.NewError(f.Type, string(cause))
}

func dataLimit(task string) *asl.Error {
	return asl.NewError(asl.ErrorDataLimitExceeded, fmt.Sprintf("The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", task))
}

func (e *execution) functionNotFound(function string) *asl.Error {
	arn := e.s.lambdaARN(function)
	if _, qualifier := functionName(function); qualifier == "" {
		arn += ":$LATEST"
	}
	return asl.NewError("Lambda.ResourceNotFoundException", fmt.Sprintf(
		"Function not found: %s (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: %s; Proxy: null)", arn, asl.NewUUID()))
}

// invokeRequest is the lambda:invoke Parameters.
type invokeRequest struct {
	function       string
	payload        []byte
	invocationType string
	version        string
}

func parseInvokeRequest(params any) (*invokeRequest, *asl.Error) {
	m, ok := params.(map[string]any)
	bad := func(field string) *asl.Error {
		return asl.Runtimef("The Parameters '%s' could not be used to start the Task: [The value of the field '%s' has an invalid format]", asl.Encode(params), field)
	}
	if !ok {
		return nil, bad("Parameters")
	}
	req := &invokeRequest{payload: []byte("{}"), invocationType: "RequestResponse", version: "$LATEST"}
	name, ok := m["FunctionName"].(string)
	if !ok || name == "" {
		return nil, bad("FunctionName")
	}
	req.function = name
	if _, q := functionName(name); q != "" && isVersion(q) {
		req.version = q
	}
	if q, present := m["Qualifier"]; present {
		qs, ok := q.(string)
		if !ok {
			return nil, bad("Qualifier")
		}
		req.function = name + ":" + qs
		if isVersion(qs) {
			req.version = qs
		}
	}
	if p, present := m["Payload"]; present {
		req.payload = []byte(asl.Encode(p))
	}
	if it, present := m["InvocationType"]; present {
		s, _ := it.(string)
		switch s {
		case "RequestResponse", "Event", "DryRun":
			req.invocationType = s
		default:
			return nil, bad("InvocationType")
		}
	}
	return req, nil
}

func isVersion(q string) bool {
	_, err := strconv.ParseUint(q, 10, 64)
	return err == nil
}

// invokeResponse is the lambda:invoke result as the service builds it.
func (e *execution) invokeResponse(req *invokeRequest, status int, payload any) map[string]any {
	requestID := asl.NewUUID()
	date := e.s.clock.Now().UTC().Format(time.RFC1123)
	length := strconv.Itoa(len(asl.Encode(payload)))
	headers := map[string]any{
		"Connection": "keep-alive", "Content-Length": length, "Content-Type": "application/json", "Date": date,
		"X-Amz-Executed-Version": req.version, "x-amzn-Remapped-Content-Length": "0", "x-amzn-RequestId": requestID,
		"X-Amzn-Trace-Id": "Root=1-" + requestID[:8],
	}
	all := map[string]any{}
	for k, v := range headers {
		all[k] = []any{v}
	}
	return map[string]any{
		"ExecutedVersion":     req.version,
		"Payload":             payload,
		"SdkHttpMetadata":     map[string]any{"AllHttpHeaders": all, "HttpHeaders": headers, "HttpStatusCode": jsonInt(status)},
		"SdkResponseMetadata": map[string]any{"RequestId": requestID},
		"StatusCode":          jsonInt(status),
	}
}

// lambdaInvoke runs a Task on arn:aws:states:::lambda:invoke, with or without
// .waitForTaskToken.
func (e *execution) lambdaInvoke(th *thread, st *asl.State, params any, timeout, heartbeat *int64, tok *taskToken) (any, *asl.Error) {
	resource := "invoke"
	if tok != nil {
		resource = "invoke.waitForTaskToken"
	}
	paramsJSON := asl.Encode(params)
	th.emit("TaskScheduled", "taskScheduledEventDetails", taskScheduledDetails{
		ResourceType: "lambda", Resource: resource, Region: e.s.region, Parameters: paramsJSON,
		TimeoutInSeconds: timeout, HeartbeatInSeconds: heartbeat,
	})
	req, err := parseInvokeRequest(params)
	if err != nil {
		return nil, err
	}
	th.emit("TaskStarted", "taskStartedEventDetails", taskStartedDetails{ResourceType: "lambda", Resource: resource})
	var beat time.Duration
	if tok != nil {
		beat = seconds(heartbeat)
	}
	al := newAlarm(e.s.clock, seconds(timeout), beat)
	defer al.stop()
	if tok != nil {
		tok.mu.Lock()
		tok.alarm = al
		tok.mu.Unlock()
	}
	failed := func(err *asl.Error) (any, *asl.Error) {
		d := taskErrorDetails{ResourceType: "lambda", Resource: resource, Error: &err.Name}
		if err.HasCause {
			d.Cause = &err.Cause
		}
		th.emit("TaskFailed", "taskFailedEventDetails", d)
		return nil, err
	}
	timedOut := func(r wakeReason) (any, *asl.Error) {
		if r == wakeAbort {
			return nil, errAborted
		}
		name := asl.ErrorTimeout
		if r == wakeHeartbeat {
			name = asl.ErrorHeartbeatTimeout
		}
		th.emit("TaskTimedOut", "taskTimedOutEventDetails", taskErrorDetails{ResourceType: "lambda", Resource: resource, Error: &name})
		return nil, &asl.Error{Name: name}
	}
	var response map[string]any
	switch req.invocationType {
	case "DryRun":
		response = e.invokeResponse(req, 204, "")
	case "Event":
		if _, ok := e.s.lambdas.lookup(req.function); !ok {
			return failed(e.functionNotFound(req.function))
		}
		go e.invokeAsync(req)
		response = e.invokeResponse(req, 202, "")
	default:
		inv := e.invoke(th, al, req.function, req.payload)
		switch {
		case inv.reason != wakeDone:
			return timedOut(inv.reason)
		case inv.notFound:
			return failed(e.functionNotFound(req.function))
		case inv.ferr != nil:
			return failed(functionFailure(inv.ferr))
		case len(inv.output) > maxPayload:
			return failed(dataLimit("lambda"))
		}
		payload, derr := asl.Decode(inv.output)
		if derr != nil {
			payload = string(inv.output)
		}
		response = e.invokeResponse(req, 200, payload)
	}
	if tok == nil {
		out := asl.Encode(response)
		th.emit("TaskSucceeded", "taskSucceededEventDetails", taskOutputDetails{ResourceType: "lambda", Resource: resource, Output: &out, OutputDetails: notTruncated})
		return response, nil
	}
	submitted := asl.Encode(response)
	th.emit("TaskSubmitted", "taskSubmittedEventDetails", taskOutputDetails{ResourceType: "lambda", Resource: resource, Output: &submitted, OutputDetails: notTruncated})
	r, res := tok.await(th.sc, al, newWakeup(e.s.busy))
	if r != wakeDone {
		return timedOut(r)
	}
	if res.err != nil {
		return failed(res.err)
	}
	th.emit("TaskSucceeded", "taskSucceededEventDetails", taskOutputDetails{ResourceType: "lambda", Resource: resource, Output: &res.output, OutputDetails: notTruncated})
	out, _ := asl.Decode([]byte(res.output))
	return out, nil
}

// invokeAsync serves an InvocationType Event call: the result is dropped.
func (e *execution) invokeAsync(req *invokeRequest) {
	h, ok := e.s.lambdas.lookup(req.function)
	if !ok {
		return
	}
	invokeHandler(context.Background(), h, asl.NewUUID(), e.s.lambdaARN(req.function), req.payload)
}
