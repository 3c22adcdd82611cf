package sfnlocal

import (
	"context"
	"encoding/json"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/aws/aws-lambda-go/lambda/messages"
	"github.com/aws/aws-lambda-go/lambdacontext"
)

// LambdaHandler serves a Lambda function in-process: it receives the invocation payload
// and returns the function's response. A returned error is a function error whose
// errorType is the error's Go type name (for *pkg.MyError, "MyError"), the way
// aws-lambda-go reports it, so that Retry and Catch match it by that name; a
// messages.InvokeResponse_Error is passed through as is. A panic is reported the same
// way. ctx carries a lambdacontext.LambdaContext and is cancelled when the task times
// out or the execution stops.
type LambdaHandler func(ctx context.Context, payload json.RawMessage) (json.RawMessage, error)

// lambdas maps function names to handlers.
type lambdas struct {
	mu       sync.RWMutex
	handlers map[string]LambdaHandler
}

// functionName extracts the function name and qualifier from a name, a partial ARN
// (123456789012:function:NAME) or a full ARN, each with an optional :QUALIFIER.
func functionName(nameOrARN string) (name, qualifier string) {
	s := nameOrARN
	if i := strings.Index(s, "function:"); i >= 0 {
		s = s[i+len("function:"):]
	}
	name, qualifier, _ = strings.Cut(s, ":")
	return name, qualifier
}

func (l *lambdas) register(nameOrARN string, h LambdaHandler) {
	name, _ := functionName(nameOrARN)
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.handlers == nil {
		l.handlers = map[string]LambdaHandler{}
	}
	l.handlers[name] = h
}

func (l *lambdas) lookup(nameOrARN string) (LambdaHandler, bool) {
	name, _ := functionName(nameOrARN)
	l.mu.RLock()
	defer l.mu.RUnlock()
	h, ok := l.handlers[name]
	return h, ok
}

// functionError is an error a function returned, as the Lambda service reports it.
type functionError = messages.InvokeResponse_Error

// invokeHandler runs a handler and turns its error or panic into a function error.
func invokeHandler(ctx context.Context, h LambdaHandler, requestID, functionARN string, payload json.RawMessage) (out json.RawMessage, ferr *functionError) {
	ctx = lambdacontext.NewContext(ctx, &lambdacontext.LambdaContext{AwsRequestID: requestID, InvokedFunctionArn: functionARN})
	defer func() {
		if v := recover(); v != nil {
			out, ferr = nil, &functionError{Message: fmt.Sprintf("%v", v), Type: errorType(v)}
		}
	}()
	out, err := h(ctx, payload)
	if err != nil {
		return nil, lambdaError(err)
	}
	if len(out) == 0 {
		out = json.RawMessage("null")
	}
	return out, nil
}

// lambdaError computes errorType as aws-lambda-go's lambda/errors.go does (reflect type
// name, pointer element for pointers).
func lambdaError(err error) *functionError {
	switch e := err.(type) {
	case messages.InvokeResponse_Error:
		return &e
	case *messages.InvokeResponse_Error:
		return e
	}
	return &functionError{Message: err.Error(), Type: errorType(err)}
}

func errorType(v any) string {
	t := reflect.TypeOf(v)
	if t.Kind() == reflect.Pointer {
		return t.Elem().Name()
	}
	return t.Name()
}
