package sfnlocal

import (
	"github.com/google/uuid"

	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/myriarch/myriarch/local/sfnlocal/asl"
)

// task runs one attempt of a Task state: lambda:invoke, with or without
// .waitForTaskToken. Without a TimeoutSecondsPath a task may run or wait as
// long as the execution, as on the service; with one (waitForTaskToken only)
// the timeout counts from the moment the task is scheduled.
func (e *execution) task(th *thread, sr *stateRun, rawInput any) (any, *asl.Error) {
	var deadline time.Time
	secs, ok, terr := sr.st.TimeoutSeconds(rawInput)
	if terr != nil {
		return nil, asErr(terr)
	}
	if ok {
		deadline = e.s.clock.Now().Add(time.Duration(secs) * time.Second)
	}
	var tok *taskToken
	if sr.st.Resource.Kind == asl.ResourceLambdaInvokeWaitForTaskToken {
		tok = e.s.newToken(e)
		defer tok.close()
	}
	token := ""
	if tok != nil {
		token = tok.token
	}
	params, err := e.effectiveInput(rawInput, sr, token)
	if err != nil {
		return nil, err
	}
	result, err := e.lambdaInvoke(th, params, tok, deadline)
	if err != nil {
		return nil, err
	}
	return e.finishResult(sr, rawInput, result)
}

// invocation is the outcome of running a handler.
type invocation struct {
	output   json.RawMessage
	ferr     *functionError
	notFound bool
	aborted  bool // the execution ended first
}

// invoke runs the function's handler in its own goroutine and waits for it or for the
// end of the execution.
func (e *execution) invoke(th *thread, function string, payload []byte) invocation {
	h, ok := e.s.lambdas.lookup(function)
	if !ok {
		return invocation{notFound: true}
	}
	w := newWakeup(e.s.busy)
	ctx, cancel := context.WithCancel(context.WithValue(th.sc.ctx, busyKey{}, e.s.busy))
	defer cancel()
	var mu sync.Mutex
	var res invocation
	requestID := uuid.NewString()
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
	if th.sc.await(w) != wakeDone {
		return invocation{aborted: true}
	}
	mu.Lock()
	defer mu.Unlock()
	return res
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
		"Function not found: %s (Service: AWSLambda; Status Code: 404; Error Code: ResourceNotFoundException; Request ID: %s; Proxy: null)", arn, uuid.NewString()))
}

// invokeRequest is the lambda:invoke Parameters: FunctionName and Payload
// (the checker refuses the others).
type invokeRequest struct {
	function string
	payload  []byte
	version  string
}

func parseInvokeRequest(params any) (*invokeRequest, *asl.Error) {
	m, ok := params.(map[string]any)
	bad := func(field string) *asl.Error {
		return asl.Runtimef("The Parameters '%s' could not be used to start the Task: [The value of the field '%s' has an invalid format]", asl.Encode(params), field)
	}
	if !ok {
		return nil, bad("Parameters")
	}
	req := &invokeRequest{payload: []byte("{}"), version: "$LATEST"}
	name, ok := m["FunctionName"].(string)
	if !ok || name == "" {
		return nil, bad("FunctionName")
	}
	req.function = name
	if _, q := functionName(name); q != "" && isVersion(q) {
		req.version = q
	}
	if p, present := m["Payload"]; present {
		req.payload = []byte(asl.Encode(p))
	}
	return req, nil
}

func isVersion(q string) bool {
	_, err := strconv.ParseUint(q, 10, 64)
	return err == nil
}

// invokeResponse is the lambda:invoke result as the service builds it.
func (e *execution) invokeResponse(req *invokeRequest, status int, payload any) map[string]any {
	requestID := uuid.NewString()
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
func (e *execution) lambdaInvoke(th *thread, params any, tok *taskToken, deadline time.Time) (any, *asl.Error) {
	resource := "invoke"
	if tok != nil {
		resource = "invoke.waitForTaskToken"
	}
	th.emit("TaskScheduled", "taskScheduledEventDetails", taskScheduledDetails{
		ResourceType: "lambda", Resource: resource, Region: e.s.region, Parameters: asl.Encode(params),
	})
	req, err := parseInvokeRequest(params)
	if err != nil {
		return nil, err
	}
	th.emit("TaskStarted", "taskStartedEventDetails", taskStartedDetails{ResourceType: "lambda", Resource: resource})
	failed := func(err *asl.Error) (any, *asl.Error) {
		d := taskErrorDetails{ResourceType: "lambda", Resource: resource, Error: &err.Name}
		if err.HasCause {
			d.Cause = &err.Cause
		}
		th.emit("TaskFailed", "taskFailedEventDetails", d)
		return nil, err
	}
	inv := e.invoke(th, req.function, req.payload)
	switch {
	case inv.aborted:
		return nil, errAborted
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
	response := e.invokeResponse(req, 200, payload)
	if tok == nil {
		out := asl.Encode(response)
		th.emit("TaskSucceeded", "taskSucceededEventDetails", taskOutputDetails{ResourceType: "lambda", Resource: resource, Output: &out, OutputDetails: notTruncated})
		return response, nil
	}
	submitted := asl.Encode(response)
	th.emit("TaskSubmitted", "taskSubmittedEventDetails", taskOutputDetails{ResourceType: "lambda", Resource: resource, Output: &submitted, OutputDetails: notTruncated})
	w := newWakeup(e.s.busy)
	if !deadline.IsZero() {
		timer := e.s.clock.AfterFunc(max(deadline.Sub(e.s.clock.Now()), 0), func() { w.fire(wakeTimer) })
		defer timer.Stop()
	}
	res, timedOut := tok.await(th.sc, w)
	switch {
	case timedOut:
		err := asl.NewError(asl.ErrorTimeout, "")
		th.emit("TaskTimedOut", "taskTimedOutEventDetails", taskErrorDetails{ResourceType: "lambda", Resource: resource, Error: &err.Name})
		return nil, err
	case res == nil:
		return nil, errAborted
	case res.err != nil:
		return failed(res.err)
	}
	th.emit("TaskSucceeded", "taskSucceededEventDetails", taskOutputDetails{ResourceType: "lambda", Resource: resource, Output: &res.output, OutputDetails: notTruncated})
	out, _ := asl.Decode([]byte(res.output))
	return out, nil
}
