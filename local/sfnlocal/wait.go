package sfnlocal

import (
	"context"
	"sync"
)

// Idle tracking. Every goroutine that runs part of an execution counts as busy while it
// can make progress; it stops counting while it waits for the clock, a task token, a
// handler or its children. Whoever wakes a waiter counts it as busy again before waking
// it, so there is no instant at which a runnable goroutine is not counted: WaitIdle can
// then tell a test that every execution is blocked on time or on a task token.
type busy struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // closed while n == 0
}

func newBusy() *busy {
	b := &busy{idle: make(chan struct{})}
	close(b.idle)
	return b
}

func (b *busy) add(d int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.n == 0 && d > 0 {
		b.idle = make(chan struct{})
	}
	b.n += d
	if b.n < 0 {
		panic("sfnlocal: busy count below zero")
	}
	if b.n == 0 && d < 0 {
		close(b.idle)
	}
}

func (b *busy) wait(ctx context.Context) error {
	b.mu.Lock()
	ch := b.idle
	b.mu.Unlock()
	select {
	case <-ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

// wakeReason says why a waiter woke up.
type wakeReason int

const (
	wakeTimer wakeReason = iota + 1 // the clock reached the deadline
	wakeDone                        // the awaited work (handler, token) completed
	wakeAbort                       // the scope was cancelled (the execution stopped)
)

// wakeup is a one-shot wake-up of one waiting goroutine.
type wakeup struct {
	b      *busy
	once   sync.Once
	ch     chan struct{}
	reason wakeReason
}

func newWakeup(b *busy) *wakeup { return &wakeup{b: b, ch: make(chan struct{})} }

// fire wakes the waiter, counting it busy first. Only the first call has an effect; it
// reports whether this call was it.
func (w *wakeup) fire(r wakeReason) bool {
	fired := false
	w.once.Do(func() {
		w.b.add(1)
		w.reason = r
		fired = true
		close(w.ch)
	})
	return fired
}

// wait blocks until fire; the caller must be counted busy before and is counted busy
// after.
func (w *wakeup) wait() wakeReason {
	w.b.add(-1)
	<-w.ch
	return w.reason
}

// scope is a unit of cancellation: an execution. Cancelling a scope wakes its registered waiters with
// wakeAbort, cancels the context given to handlers, and cancels its child scopes.
type scope struct {
	mu       sync.Mutex
	ctx      context.Context
	stop     context.CancelFunc
	done     bool
	waiters  map[*wakeup]struct{}
	children map[*scope]struct{}
	parent   *scope
}

func newScope(parent *scope) *scope {
	base := context.Background()
	if parent != nil {
		base = parent.ctx
	}
	ctx, stop := context.WithCancel(base)
	sc := &scope{ctx: ctx, stop: stop, waiters: map[*wakeup]struct{}{}, children: map[*scope]struct{}{}, parent: parent}
	if parent != nil {
		parent.mu.Lock()
		cancelled := parent.done
		if !cancelled {
			parent.children[sc] = struct{}{}
		}
		parent.mu.Unlock()
		if cancelled {
			sc.cancel()
		}
	}
	return sc
}

func (sc *scope) cancelled() bool {
	sc.mu.Lock()
	defer sc.mu.Unlock()
	return sc.done
}

func (sc *scope) cancel() {
	sc.mu.Lock()
	if sc.done {
		sc.mu.Unlock()
		return
	}
	sc.done = true
	waiters := sc.waiters
	children := sc.children
	sc.waiters, sc.children = map[*wakeup]struct{}{}, map[*scope]struct{}{}
	sc.mu.Unlock()
	sc.stop()
	for w := range waiters {
		w.fire(wakeAbort)
	}
	for c := range children {
		c.cancel()
	}
}

// release detaches a finished child scope from its parent.
func (sc *scope) release() {
	sc.stop()
	if sc.parent != nil {
		sc.parent.mu.Lock()
		delete(sc.parent.children, sc)
		sc.parent.mu.Unlock()
	}
}

// await registers w, waits for it and unregisters it. A scope that is already cancelled
// does not wait.
func (sc *scope) await(w *wakeup) wakeReason {
	sc.mu.Lock()
	if sc.done {
		sc.mu.Unlock()
		w.fire(wakeAbort)
		return w.wait()
	}
	sc.waiters[w] = struct{}{}
	sc.mu.Unlock()
	r := w.wait()
	sc.mu.Lock()
	delete(sc.waiters, w)
	sc.mu.Unlock()
	return r
}

type busyKey struct{}

// AwaitCancel blocks until ctx is done without counting as work in progress. A Lambda
// handler in a test that never answers (until StopExecution) uses it, so that WaitIdle
// does not wait for it. It returns ctx.Err().
func AwaitCancel(ctx context.Context) error {
	b, ok := ctx.Value(busyKey{}).(*busy)
	if !ok {
		<-ctx.Done()
		return ctx.Err()
	}
	b.add(-1)
	<-ctx.Done()
	b.add(1)
	return ctx.Err()
}
