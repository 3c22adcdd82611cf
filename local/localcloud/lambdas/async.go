package lambdas

import "time"

// Delays are the waits between the attempts of an asynchronous event.
type Delays struct {
	// AfterError is the wait before retry n (1, 2, ...) after a function
	// error; AWS waits 1 minute, then 2.
	AfterError func(retry int) time.Duration
	// AfterThrottle is the wait after the n-th throttle (or error of the
	// service); AWS backs off from 1 s up to 5 minutes.
	AfterThrottle func(n int) time.Duration
}

func (d Delays) withDefaults() Delays {
	if d.AfterError == nil {
		d.AfterError = func(retry int) time.Duration { return time.Duration(retry) * time.Minute }
	}
	if d.AfterThrottle == nil {
		d.AfterThrottle = func(n int) time.Duration { return min(time.Second<<min(n-1, 9), 5*time.Minute) }
	}
	return d
}

// event is one queued asynchronous invocation.
type event struct {
	queued    time.Time
	retries   int // retries after function errors so far
	throttles int // throttles and service errors so far
}

// attempt is how an attempt ended.
type attempt int

const (
	succeeded attempt = iota
	functionFailed
	throttled // or the service failed: retried until the event is too old
)

// next decides an event's fate after an attempt: wait and try again, or
// drop it with a reason, or done (both zero). A function error is retried
// MaxRetries times; a throttle as long as the event is young enough. The
// age is checked against the time of the next attempt: an event queued at
// 12:00:00 with MaxEventAge 60 s whose next try would be at 12:01:05 is
// dropped now.
func (e *event) next(cfg AsyncConfig, d Delays, how attempt, now time.Time) (wait time.Duration, drop string) {
	switch how {
	case succeeded:
		return 0, ""
	case functionFailed:
		if e.retries >= cfg.MaxRetries {
			return 0, "retries exhausted"
		}
		e.retries++
		wait = d.AfterError(e.retries)
	default:
		e.throttles++
		wait = d.AfterThrottle(e.throttles)
	}
	if now.Add(wait).Sub(e.queued) > cfg.MaxEventAge {
		return 0, "event older than its maximum age"
	}
	return wait, ""
}

// InvokeAsync queues an event (InvocationType Event) and returns at once.
// The event is retried per the function's AsyncConfig; a dropped event is
// logged and counted (Dropped).
func (r *Runtime) InvokeAsync(nameOrARN string, payload []byte) error {
	p, err := r.lookup(nameOrARN)
	if err != nil {
		return err
	}
	if err := checkSize(payload, true); err != nil {
		return err
	}
	r.queued.Add(1)
	go func() {
		defer r.queued.Done()
		r.deliver(p, payload, &event{queued: r.Now()})
	}()
	return nil
}

func (r *Runtime) deliver(p *pool, payload []byte, e *event) {
	for {
		res, err := r.Invoke(r.life, p.fn.Name, payload)
		how := succeeded
		switch {
		case r.life.Err() != nil:
			return
		case err != nil: // a throttle, or the emulator failed
			how = throttled
		case res.Failed():
			how = functionFailed
		}
		wait, drop := e.next(p.fn.Async, r.Delays, how, r.Now())
		if drop != "" {
			r.dropped.Add(1)
			r.Log.Warn("asynchronous event dropped", "function", p.fn.Name, "reason", drop,
				"retries", e.retries, "throttles", e.throttles, "errorType", res.ErrorType, "error", err)
			return
		}
		if how == succeeded {
			return
		}
		select {
		case <-time.After(wait):
		case <-r.life.Done():
			return
		}
	}
}

// Dropped counts the asynchronous events dropped so far.
func (r *Runtime) Dropped() int64 { return r.dropped.Load() }
