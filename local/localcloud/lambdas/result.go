package lambdas

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
)

// Result is what the Invoke API returns for a synchronous invocation.
type Result struct {
	RequestID string
	Payload   []byte // the function's response, or the error JSON when it failed
	// FunctionError is "Unhandled" when the function failed (an error it
	// returned, a crash, a timeout, a response too large), else empty.
	FunctionError string
	// ErrorType and ErrorMessage are the failure's errorType (the Go error's
	// type name, "Sandbox.Timedout", "Runtime.ExitError",
	// "Function.ResponseSizeTooLarge") and errorMessage.
	ErrorType, ErrorMessage string
}

// Failed says whether the function failed.
func (r Result) Failed() bool { return r.FunctionError != "" }

// errorTimedOut is the errorType Lambda reports for a function that
// exceeded its timeout.
const errorTimedOut = "Sandbox.Timedout"

// errorExited is the errorType of a runtime that exited.
const errorExited = "Runtime.ExitError"

// verdict is what one of RIE's replies means.
type verdict struct {
	result Result
	// replace: the execution environment is not reused, as Lambda resets
	// one after a timeout or a runtime failure.
	replace bool
}

// classify turns RIE's reply into the Invoke API's result. RIE answers a
// function error as it answers a success (200, headers dropped), so the
// error is recognised by its shape: the object the runtime posts to
// /invocation/{id}/error, with errorType and errorMessage and nothing but
// a stackTrace besides. A timeout is RIE's plain-text "Task timed out
// after N.00 seconds", reported as Lambda does; a runtime that exited or
// an oversized response is a 502 with the error JSON, a runtime that
// exited during its init a 502 without a body.
func classify(requestID string, r rieReply) (verdict, error) {
	if r.status == http.StatusOK && bytes.HasPrefix(r.body, []byte("Task timed out after ")) {
		return verdict{result: timedOut(requestID, string(r.body)), replace: true}, nil
	}
	e, isErr := asFunctionError(r.body)
	switch {
	case r.status == http.StatusOK && isErr:
		return verdict{result: failed(requestID, r.body, e)}, nil
	case r.status == http.StatusOK:
		return verdict{result: Result{RequestID: requestID, Payload: r.body}}, nil
	case isErr:
		return verdict{result: failed(requestID, r.body, e), replace: true}, nil
	case r.status == http.StatusBadGateway && len(bytes.TrimSpace(r.body)) == 0:
		// RIE's answer when the runtime exited during its init: Lambda
		// reports Runtime.ExitError (RIE logs the exit status, which its
		// answer leaves out).
		return verdict{result: exited(requestID), replace: true}, nil
	}
	return verdict{replace: true}, fmt.Errorf("RIE answered %d: %.200s", r.status, r.body)
}

// timedOut is Lambda's result for an invocation past its timeout; what is
// the message RIE gives, prefixed as Lambda prefixes it.
func timedOut(requestID, what string) Result {
	e := functionError{Type: errorTimedOut, Message: fmt.Sprintf("RequestId: %s Error: %s", requestID, what)}
	body, _ := json.Marshal(e)
	return failed(requestID, body, e)
}

func exited(requestID string) Result {
	e := functionError{Type: errorExited, Message: fmt.Sprintf("RequestId: %s Error: Runtime exited with error during init (the exit status is in the function's log)", requestID)}
	body, _ := json.Marshal(e)
	return failed(requestID, body, e)
}

func failed(requestID string, body []byte, e functionError) Result {
	return Result{RequestID: requestID, Payload: body, FunctionError: "Unhandled", ErrorType: e.Type, ErrorMessage: e.Message}
}

type functionError struct {
	Type    string `json:"errorType"`
	Message string `json:"errorMessage"`
}

func asFunctionError(body []byte) (functionError, bool) {
	var fields map[string]json.RawMessage
	if json.Unmarshal(body, &fields) != nil {
		return functionError{}, false
	}
	for k := range fields {
		if k != "errorType" && k != "errorMessage" && k != "stackTrace" {
			return functionError{}, false
		}
	}
	var e functionError
	if _, ok := fields["errorType"]; !ok || json.Unmarshal(body, &e) != nil {
		return functionError{}, false
	}
	return e, true
}
