package sfnlocal

import (
	"sync"
	"time"
)

// alarm holds the timers of one task attempt (TimeoutSeconds and HeartbeatSeconds) and
// wakes whichever waiter the task currently has: the handler, then the task token.
type alarm struct {
	clock     Clock
	mu        sync.Mutex
	rang      wakeReason
	w         *wakeup
	timeout   Timer
	heartbeat Timer
	beatEvery time.Duration
	stopped   bool
}

func newAlarm(clock Clock, timeout, heartbeat time.Duration) *alarm {
	a := &alarm{clock: clock, beatEvery: heartbeat}
	a.mu.Lock()
	defer a.mu.Unlock()
	if timeout > 0 {
		a.timeout = clock.AfterFunc(timeout, func() { a.ring(wakeTimeout) })
	}
	if heartbeat > 0 {
		a.heartbeat = clock.AfterFunc(heartbeat, func() { a.ring(wakeHeartbeat) })
	}
	return a
}

func (a *alarm) ring(r wakeReason) {
	a.mu.Lock()
	if a.rang == 0 && !a.stopped {
		a.rang = r
	}
	w := a.w
	a.mu.Unlock()
	if w != nil {
		w.fire(r)
	}
}

// arm makes w the waiter to wake; it returns the reason if the alarm rang already.
func (a *alarm) arm(w *wakeup) wakeReason {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.w = w
	return a.rang
}

// beat restarts the heartbeat timer (SendTaskHeartbeat).
func (a *alarm) beat() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.heartbeat == nil || a.stopped || a.rang != 0 {
		return
	}
	a.heartbeat.Stop()
	a.heartbeat = a.clock.AfterFunc(a.beatEvery, func() { a.ring(wakeHeartbeat) })
}

func (a *alarm) stop() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stopped = true
	a.w = nil
	if a.timeout != nil {
		a.timeout.Stop()
	}
	if a.heartbeat != nil {
		a.heartbeat.Stop()
	}
}
