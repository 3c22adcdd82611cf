package asl

import "time"

// Definition is a parsed and validated state machine definition.
type Definition struct {
	Comment string
	StartAt string
	States  map[string]*State
}

// The state types that sfnlocal implements.
const (
	TypeTask    = "Task"
	TypeChoice  = "Choice"
	TypeWait    = "Wait"
	TypeSucceed = "Succeed"
	TypeFail    = "Fail"
)

// State is one state of a machine. Which fields are set depends on Type.
type State struct {
	Name string
	Type string
	// Next is the following state; End marks a terminal state.
	Next string
	End  bool

	OutputPath PathField
	ResultPath PathField
	Parameters *Template

	Retry []Retrier
	Catch []Catcher

	// Task.
	Resource Resource
	// TimeoutSecondsPath selects the timeout of a .waitForTaskToken task:
	// when it elapses before the token is answered, the task fails with
	// States.Timeout.
	TimeoutSecondsPath *Path

	// Choice.
	Choices []*ChoiceRule
	Default string

	// Wait.
	TimestampPath *Path

	// Fail.
	Error *string
	Cause *string
}

// PathField is OutputPath or ResultPath as written: absent (the
// default "$"), null, or a path.
type PathField struct {
	Null bool
	Path *Path
}

// Select applies OutputPath semantics: absent keeps the value, null gives
// {}, a path selects from the value (a missing node is a *PathError).
func (f PathField) Select(v any) (any, error) {
	switch {
	case f.Null:
		return map[string]any{}, nil
	case f.Path == nil:
		return v, nil
	}
	return f.Path.Get(v)
}

// Merge applies ResultPath semantics: absent replaces the input with the result, null
// discards the result, a reference path writes the result into (a copy of) the input.
func (f PathField) Merge(input, result any) (any, error) {
	switch {
	case f.Null:
		return input, nil
	case f.Path == nil:
		return result, nil
	}
	return f.Path.Set(input, result)
}

// ResourceKind says how a Task runs.
type ResourceKind int

const (
	// ResourceLambdaInvoke is arn:aws:states:::lambda:invoke: Parameters are the Invoke
	// request and the result is the Invoke response (Payload, StatusCode, ...).
	ResourceLambdaInvoke ResourceKind = iota + 1
	// ResourceLambdaInvokeWaitForTaskToken invokes the function and then waits for
	// SendTaskSuccess or SendTaskFailure with the task token.
	ResourceLambdaInvokeWaitForTaskToken
)

// Resource is a Task's resource.
type Resource struct {
	ARN  string
	Kind ResourceKind
}

// Retrier is one element of a Retry field.
type Retrier struct {
	ErrorEquals     []string
	IntervalSeconds int64
	MaxAttempts     int64
	BackoffRate     float64
	MaxDelaySeconds int64 // 0: no cap
}

// Delay is the wait before retry number attempt (1 for the first retry):
// IntervalSeconds × BackoffRate^(attempt-1), capped at MaxDelaySeconds.
// Example: IntervalSeconds 3, BackoffRate 2, MaxDelaySeconds 10 → 3s, 6s, 10s, 10s.
func (r Retrier) Delay(attempt int) time.Duration {
	secs := float64(r.IntervalSeconds)
	for i := 1; i < attempt; i++ {
		secs *= r.BackoffRate
		if r.MaxDelaySeconds > 0 && secs >= float64(r.MaxDelaySeconds) {
			break
		}
	}
	if r.MaxDelaySeconds > 0 && secs > float64(r.MaxDelaySeconds) {
		secs = float64(r.MaxDelaySeconds)
	}
	const maxSecs = 99999999 * 365
	secs = min(secs, maxSecs)
	return time.Duration(secs * float64(time.Second))
}

// Catcher is one element of a Catch field.
type Catcher struct {
	ErrorEquals []string
	Next        string
	ResultPath  PathField
}

// ErrorOutput is what a Catcher passes on: {"Error": name, "Cause": cause}.
func ErrorOutput(e *Error) map[string]any {
	return map[string]any{"Error": e.Name, "Cause": e.Cause}
}
