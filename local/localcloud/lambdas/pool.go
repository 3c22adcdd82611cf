package lambdas

import "sync"

// pool holds one function's instances: idle ones are reused (warm
// starts), and a new one is started (a cold start) only while the
// function is under its concurrency limit.
type pool struct {
	fn    Function
	limit int
	// reason is the throttle's reason at this limit.
	reason string
	start  func() (*instance, error)

	mu     sync.Mutex
	idle   []*instance
	all    map[*instance]bool
	count  int // instances running or starting
	closed bool
}

func newPool(fn Function, maxInstances int) *pool {
	p := &pool{fn: fn, all: map[*instance]bool{}}
	p.limit, p.reason = concurrencyLimit(fn, maxInstances)
	return p
}

// concurrencyLimit is how many instances a function may run at once: its
// reserved concurrency when it has one (0 throttles everything), else the
// account's unreserved concurrency, here maxInstances.
func concurrencyLimit(fn Function, maxInstances int) (int, string) {
	if fn.ReservedConcurrency >= 0 {
		return fn.ReservedConcurrency, "ReservedFunctionConcurrentInvocationLimitExceeded"
	}
	return maxInstances, "ConcurrentInvocationLimitExceeded"
}

// acquire takes an idle instance, or starts one when under the limit, or
// answers that the invocation is throttled.
func (p *pool) acquire() (inst *instance, cold bool, err error) {
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		return nil, false, errStopped
	}
	for len(p.idle) > 0 {
		inst = p.idle[len(p.idle)-1]
		p.idle = p.idle[:len(p.idle)-1]
		if inst.alive() {
			p.mu.Unlock()
			return inst, false, nil
		}
		p.forget(inst)
	}
	if p.count >= p.limit {
		p.mu.Unlock()
		return nil, false, &ThrottledError{Function: p.fn.Name, Reason: p.reason}
	}
	p.count++
	p.mu.Unlock()

	inst, err = p.start()
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case err != nil:
		p.count--
		return nil, false, err
	case p.closed:
		p.count--
		go inst.stop()
		return nil, false, errStopped
	}
	p.all[inst] = true
	return inst, true, nil
}

// release gives an instance back after an invocation, or stops it when it
// must not be reused.
func (p *pool) release(inst *instance, replace bool) {
	p.mu.Lock()
	if replace || p.closed || !inst.alive() {
		p.forget(inst)
		p.mu.Unlock()
		inst.stop()
		return
	}
	p.idle = append(p.idle, inst)
	p.mu.Unlock()
}

func (p *pool) forget(inst *instance) {
	if p.all[inst] {
		delete(p.all, inst)
		p.count--
	}
}

// close stops every instance, busy ones included.
func (p *pool) close() {
	p.mu.Lock()
	p.closed = true
	all := p.all
	p.all, p.idle = map[*instance]bool{}, nil
	p.mu.Unlock()
	for inst := range all {
		inst.stop()
	}
}
