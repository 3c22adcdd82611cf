package sfnlocal

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/myriarch/myriarch/local/sfnlocal/asl"
)

// errAborted ends a thread whose scope was cancelled: the execution stopped.
var errAborted = &asl.Error{Name: "sfnlocal.Aborted"}

// run is the execution's goroutine.
func (e *execution) run() {
	defer e.s.busy.add(-1)
	th := &thread{e: e, sc: e.root}
	out, err := e.runMachine(th, e.inputValue)
	switch {
	case err == errAborted:
		// Stopped or timed out: the closing event is recorded already.
	case err != nil:
		e.fail(th.prev, err)
	default:
		e.succeed(th.prev, out)
	}
}

// runMachine runs states from StartAt until a state ends the machine.
func (e *execution) runMachine(th *thread, input any) (any, *asl.Error) {
	name := e.def.StartAt
	for {
		if th.sc.cancelled() {
			return nil, errAborted
		}
		st := e.def.States[name]
		out, next, err := e.runState(th, st, input)
		if err != nil {
			return nil, err
		}
		if next == "" {
			return out, nil
		}
		name, input = next, out
	}
}

// stateRun is the state being run: its entry, for messages.
type stateRun struct {
	st        *asl.State
	enteredID int64
}

// runState runs one state and returns its output and the next state ("" to end).
func (e *execution) runState(th *thread, st *asl.State, input any) (any, string, *asl.Error) {
	encoded := asl.Encode(input)
	sr := &stateRun{st: st}
	sr.enteredID = th.emit(st.Type+"StateEntered", "stateEnteredEventDetails",
		stateEnteredDetails{Name: st.Name, Input: &encoded, InputDetails: notTruncated})
	var out any
	var err *asl.Error
	switch st.Type {
	case asl.TypeSucceed:
		out, err = e.succeedState(sr, input)
	case asl.TypeFail:
		err = e.failState(sr)
	case asl.TypeChoice:
		var next string
		out, next, err = e.choice(sr, input)
		if err == nil {
			return e.exit(th, sr, out, next)
		}
	case asl.TypeWait:
		out, err = e.wait(th, sr, input)
	case asl.TypeTask:
		out, err = e.withRetry(th, sr, input, func() (any, *asl.Error) { return e.task(th, sr, input) })
	}
	if err == errAborted {
		th.emit(st.Type+"StateAborted", "", nil)
		return nil, "", err
	}
	if err != nil {
		if err.Terminal() {
			return nil, "", e.runtimeError(sr, err)
		}
		if ct := catcherFor(st.Catch, err); ct != nil {
			caught, perr := ct.ResultPath.Merge(input, asl.ErrorOutput(err))
			if perr != nil {
				return nil, "", e.runtimeError(sr, asErr(perr))
			}
			return e.exit(th, sr, caught, ct.Next)
		}
		return nil, "", err
	}
	next := st.Next
	if st.End || st.Type == asl.TypeSucceed {
		next = ""
	}
	return e.exit(th, sr, out, next)
}

// exit records the state's exit.
func (e *execution) exit(th *thread, sr *stateRun, out any, next string) (any, string, *asl.Error) {
	encoded := asl.Encode(out)
	if len(encoded) > maxPayload {
		return nil, "", asl.NewError(asl.ErrorDataLimitExceeded, fmt.Sprintf("The state/task '%s' returned a result with a size exceeding the maximum number of bytes service limit.", sr.st.Name))
	}
	th.emit(sr.st.Type+"StateExited", "stateExitedEventDetails",
		stateExitedDetails{Name: sr.st.Name, Output: &encoded, OutputDetails: notTruncated})
	return out, next, nil
}

// runtimeError prefixes a States.Runtime cause with the state, as the service does.
func (e *execution) runtimeError(sr *stateRun, err *asl.Error) *asl.Error {
	if err.Name != asl.ErrorRuntime || strings.HasPrefix(err.Cause, "Reference path") || strings.HasPrefix(err.Cause, "An error occurred") {
		return err
	}
	return asl.NewError(err.Name, fmt.Sprintf("An error occurred while executing the state '%s' (entered at the event id #%d). %s", sr.st.Name, sr.enteredID, err.Cause))
}

func catcherFor(catchers []asl.Catcher, err *asl.Error) *asl.Catcher {
	for i := range catchers {
		if asl.Matches(catchers[i].ErrorEquals, err.Name) {
			return &catchers[i]
		}
	}
	return nil
}

// asErr converts the errors of the asl package to state errors: path errors are
// States.Runtime errors, as on the service.
func asErr(err error) *asl.Error {
	var ae *asl.Error
	if errors.As(err, &ae) {
		return ae
	}
	return asl.Runtimef("%v", err)
}

// selectPath applies OutputPath.
func selectPath(f asl.PathField, v any) (any, *asl.Error) {
	out, err := f.Select(v)
	if err != nil {
		return nil, asl.Runtimef("Invalid path '%s' : %v", f.Path, err)
	}
	return out, nil
}

// contextObject builds $$ for a state: the fields statemachines/ reads,
// $$.Execution.Id and, in a .waitForTaskToken task, $$.Task.Token (the
// checker refuses the others).
func (e *execution) contextObject(token string) map[string]any {
	ctx := map[string]any{"Execution": map[string]any{"Id": e.arn}}
	if token != "" {
		ctx["Task"] = map[string]any{"Token": token}
	}
	return ctx
}

// effectiveInput applies Parameters.
func (e *execution) effectiveInput(input any, sr *stateRun, token string) (any, *asl.Error) {
	if sr.st.Parameters == nil {
		return input, nil
	}
	out, perr := sr.st.Parameters.Eval(input, e.contextObject(token))
	if perr != nil {
		return nil, asErr(perr)
	}
	return out, nil
}

// finishResult applies ResultPath and OutputPath to a state's result.
func (e *execution) finishResult(sr *stateRun, rawInput, result any) (any, *asl.Error) {
	merged, err := sr.st.ResultPath.Merge(rawInput, result)
	if err != nil {
		return nil, asErr(err)
	}
	return selectPath(sr.st.OutputPath, merged)
}

func (e *execution) succeedState(sr *stateRun, input any) (any, *asl.Error) {
	return selectPath(sr.st.OutputPath, input)
}

func (e *execution) failState(sr *stateRun) *asl.Error {
	out := &asl.Error{}
	if sr.st.Error != nil {
		out.Name = *sr.st.Error
	}
	if sr.st.Cause != nil {
		out.Cause, out.HasCause = *sr.st.Cause, true
	}
	return out
}

func (e *execution) choice(sr *stateRun, v any) (any, string, *asl.Error) {
	next := ""
	for _, rule := range sr.st.Choices {
		ok, cerr := rule.Eval(v)
		if cerr != nil {
			return nil, "", asErr(cerr)
		}
		if ok {
			next = rule.Next
			break
		}
	}
	if next == "" {
		next = sr.st.Default
	}
	if next == "" {
		return nil, "", asl.NewError(asl.ErrorNoChoiceMatched, "No Matches!")
	}
	out, err := selectPath(sr.st.OutputPath, v)
	return out, next, err
}

func (e *execution) wait(th *thread, sr *stateRun, v any) (any, *asl.Error) {
	until, werr := sr.st.WaitUntil(v)
	if werr != nil {
		return nil, asErr(werr)
	}
	// The service keeps whole seconds of a Wait's timestamp: 12:00:00.500Z
	// ends the wait at 12:00:00, half a second early.
	until = until.Truncate(time.Second)
	if e.sleepUntil(th, until) {
		return nil, errAborted
	}
	return selectPath(sr.st.OutputPath, v)
}

// sleepUntil waits for the clock to reach t; it reports true if the thread's scope was
// cancelled first.
func (e *execution) sleepUntil(th *thread, t time.Time) bool {
	d := t.Sub(e.s.clock.Now())
	if d <= 0 {
		return th.sc.cancelled()
	}
	w := newWakeup(e.s.busy)
	timer := e.s.clock.AfterFunc(d, func() { w.fire(wakeTimer) })
	r := th.sc.await(w)
	timer.Stop()
	return r != wakeTimer
}

// withRetry runs attempts of a Task state and retries errors that a Retrier matches, waiting IntervalSeconds × BackoffRate^(n-1) (capped by
// MaxDelaySeconds) on the clock before retry n. Each Retrier counts its own attempts.
func (e *execution) withRetry(th *thread, sr *stateRun, input any, attempt func() (any, *asl.Error)) (any, *asl.Error) {
	counts := make([]int64, len(sr.st.Retry))
	for {
		out, err := attempt()
		if err == nil || err == errAborted || err.Terminal() {
			return out, err
		}
		i := retrierFor(sr.st.Retry, err)
		if i < 0 || counts[i] >= sr.st.Retry[i].MaxAttempts {
			return nil, err
		}
		counts[i]++
		if e.sleepUntil(th, e.s.clock.Now().Add(sr.st.Retry[i].Delay(int(counts[i])))) {
			return nil, errAborted
		}
	}
}

func retrierFor(retriers []asl.Retrier, err *asl.Error) int {
	for i := range retriers {
		if asl.Matches(retriers[i].ErrorEquals, err.Name) {
			return i
		}
	}
	return -1
}
