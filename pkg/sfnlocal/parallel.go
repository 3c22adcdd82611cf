package sfnlocal

import (
	"sync"

	"github.com/myriarch/myriarch/pkg/sfnlocal/asl"
)

// fanOut runs n threads of the same parent concurrently (Parallel branches, Map
// iterations) and waits for all of them. The first failure cancels the others, which
// end as aborted; fanOut returns the outputs in order and the first failure.
type fanOut struct {
	e       *execution
	sc      *scope
	mu      sync.Mutex
	outputs []any
	first   *asl.Error
	last    int64 // the highest event id of the threads, for the parent's next event
}

func (e *execution) newFanOut(parent *scope, n int) *fanOut {
	return &fanOut{e: e, sc: newScope(parent), outputs: make([]any, n)}
}

// run starts body for indexes 0..n-1 and waits for them all.
func (f *fanOut) run(n int, prev int64, body func(i int, th *thread) (any, *asl.Error)) {
	if n == 0 {
		return
	}
	done := newWakeup(f.e.s.busy)
	var mu sync.Mutex
	remaining := n
	for i := 0; i < n; i++ {
		f.e.s.busy.add(1)
		go func() {
			defer f.e.s.busy.add(-1)
			th := &thread{e: f.e, sc: f.sc, prev: prev}
			out, err := body(i, th)
			f.record(i, th.prev, out, err)
			mu.Lock()
			remaining--
			last := remaining == 0
			mu.Unlock()
			if last {
				done.fire(wakeDone)
			}
		}()
	}
	done.wait()
	f.sc.release()
}

func (f *fanOut) record(i int, last int64, out any, err *asl.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.last = max(f.last, last)
	if err == nil {
		f.outputs[i] = out
		return
	}
	if err != errAborted && f.first == nil {
		f.first = err
		f.sc.cancel()
	}
}

// outcome returns the outputs or the error that ended the fan-out: the first failure,
// or errAborted when the parent scope was cancelled.
func (f *fanOut) outcome(parent *scope) ([]any, *asl.Error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if parent.cancelled() {
		return nil, errAborted
	}
	if f.first != nil {
		return nil, f.first
	}
	return f.outputs, nil
}

// parallel runs one attempt of a Parallel state: every branch gets the effective input;
// the result is the array of the branches' outputs. A failing branch fails the state
// with the branch's error, as on the service.
func (e *execution) parallel(th *thread, sr *stateRun, rawInput any) (any, *asl.Error) {
	input, err := e.effectiveInput(sr, rawInput, "")
	if err != nil {
		return nil, err
	}
	started := th.emit("ParallelStateStarted", "", nil)
	sr.fannedOut = true
	f := e.newFanOut(th.sc, len(sr.st.Branches))
	f.run(len(sr.st.Branches), started, func(i int, bt *thread) (any, *asl.Error) {
		return e.runMachine(bt, sr.st.Branches[i], input)
	})
	th.prev = max(th.prev, f.last)
	outputs, err := f.outcome(th.sc)
	switch {
	case err == errAborted:
		return nil, err
	case err != nil:
		return nil, err
	}
	th.emit("ParallelStateSucceeded", "", nil)
	return e.finishResult(sr, rawInput, outputs)
}

// mapState runs one attempt of an inline Map state: the item processor runs for every
// item of ItemsPath (with ItemSelector applied), at most MaxConcurrency at once (0 is
// no limit); the result is the array of the iterations' outputs.
func (e *execution) mapState(th *thread, sr *stateRun, rawInput any) (any, *asl.Error) {
	st := sr.st
	input, err := selectPath(st.InputPath, rawInput)
	if err != nil {
		return nil, err
	}
	itemsValue, err := selectPath(st.ItemsPath, input)
	if err != nil {
		return nil, err
	}
	items, ok := itemsValue.([]any)
	if !ok {
		path := "$"
		if st.ItemsPath.Path != nil {
			path = st.ItemsPath.Path.String()
		}
		return nil, asl.Runtimef("Reference path \"%s\" must point to array.", path)
	}
	limit := st.MaxConcurrency
	if st.MaxConcurrencyPath != nil {
		n, perr := asl.IntegerAt(st.MaxConcurrencyPath, input, "MaxConcurrencyPath")
		if perr != nil {
			return nil, asErr(perr)
		}
		limit = n
	}
	inputs := make([]any, len(items))
	for i, item := range items {
		inputs[i] = item
		if st.ItemSelector != nil {
			ctx := e.contextObject(sr, "", map[string]any{"Index": jsonInt(i), "Value": item})
			v, serr := st.ItemSelector.Eval(input, ctx)
			if serr != nil {
				return nil, asErr(serr)
			}
			inputs[i] = v
		}
	}
	started := th.emit("MapStateStarted", "mapStateStartedEventDetails", mapStartedDetails{Length: len(items)})
	sr.fannedOut = true
	f := e.newFanOut(th.sc, len(items))
	var gate *slots
	if limit > 0 && int(limit) < len(items) {
		gate = &slots{b: e.s.busy, free: int(limit)}
	}
	f.run(len(items), started, func(i int, it *thread) (any, *asl.Error) {
		if gate != nil {
			if !gate.acquire(f.sc) {
				return nil, errAborted
			}
			defer gate.release()
		}
		detail := mapIterationDetails{Name: st.Name, Index: i}
		it.emit("MapIterationStarted", "mapIterationStartedEventDetails", detail)
		out, err := e.runMachine(it, st.Processor, inputs[i])
		switch {
		case err == errAborted:
			it.emit("MapIterationAborted", "mapIterationAbortedEventDetails", detail)
		case err != nil:
			it.emit("MapIterationFailed", "mapIterationFailedEventDetails", detail)
		default:
			it.emit("MapIterationSucceeded", "mapIterationSucceededEventDetails", detail)
		}
		return out, err
	})
	th.prev = max(th.prev, f.last)
	outputs, err := f.outcome(th.sc)
	switch {
	case err == errAborted:
		return nil, err
	case err != nil:
		return nil, err
	}
	th.emit("MapStateSucceeded", "", nil)
	return e.finishResult(sr, rawInput, outputs)
}
