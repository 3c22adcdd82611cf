package sfnlocal

import (
	"context"
	"sort"
	"sync"
	"time"
)

// Clock is the time source of the endpoint. AfterFunc arranges for f to run once the
// clock has advanced by d; Stop on the returned Timer cancels it.
type Clock interface {
	Now() time.Time
	AfterFunc(d time.Duration, f func()) Timer
}

// Timer is a pending AfterFunc call.
type Timer interface {
	// Stop cancels the call; it reports whether the call was still pending.
	Stop() bool
}

// RealClock returns the wall clock.
func RealClock() Clock { return realClock{} }

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) AfterFunc(d time.Duration, f func()) Timer { return time.AfterFunc(d, f) }

// Sleep waits until clk has advanced by d or ctx is done.
func Sleep(ctx context.Context, clk Clock, d time.Duration) error {
	done := make(chan struct{})
	t := clk.AfterFunc(d, func() { close(done) })
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		t.Stop()
		return ctx.Err()
	}
}

// FakeClock is a Clock that moves only when told to. Timers due at or before the new
// time run, in order of their due time, synchronously inside Advance, AdvanceTo and
// AdvanceToNext (and inside AfterFunc itself when d <= 0); Now during such a call
// returns the timer's due time.
type FakeClock struct {
	mu     sync.Mutex
	now    time.Time
	seq    int
	timers []*fakeTimer
}

type fakeTimer struct {
	c   *FakeClock
	at  time.Time
	seq int
	f   func()
}

// NewFakeClock returns a FakeClock that reads t0.
func NewFakeClock(t0 time.Time) *FakeClock { return &FakeClock{now: t0} }

// Now returns the clock's current time.
func (c *FakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// AfterFunc schedules f to run when the clock reaches Now()+d.
func (c *FakeClock) AfterFunc(d time.Duration, f func()) Timer {
	c.mu.Lock()
	t := &fakeTimer{c: c, at: c.now.Add(d), f: f, seq: c.seq}
	c.seq++
	if d <= 0 {
		c.mu.Unlock()
		f()
		return t
	}
	c.timers = append(c.timers, t)
	c.mu.Unlock()
	return t
}

// Stop cancels the timer.
func (t *fakeTimer) Stop() bool {
	c := t.c
	c.mu.Lock()
	defer c.mu.Unlock()
	for i, x := range c.timers {
		if x == t {
			c.timers = append(c.timers[:i], c.timers[i+1:]...)
			return true
		}
	}
	return false
}

// Advance moves the clock forward by d, running the timers that fall due.
func (c *FakeClock) Advance(d time.Duration) { c.AdvanceTo(c.Now().Add(d)) }

// AdvanceTo moves the clock to t (never backwards), running the timers that fall due.
func (c *FakeClock) AdvanceTo(t time.Time) {
	for {
		c.mu.Lock()
		next := c.popDue(t)
		if next == nil {
			if t.After(c.now) {
				c.now = t
			}
			c.mu.Unlock()
			return
		}
		if next.at.After(c.now) {
			c.now = next.at
		}
		c.mu.Unlock()
		next.f()
	}
}

// popDue removes and returns the earliest timer due at or before t (c.mu held).
func (c *FakeClock) popDue(t time.Time) *fakeTimer {
	if len(c.timers) == 0 {
		return nil
	}
	sort.SliceStable(c.timers, func(i, j int) bool {
		if c.timers[i].at.Equal(c.timers[j].at) {
			return c.timers[i].seq < c.timers[j].seq
		}
		return c.timers[i].at.Before(c.timers[j].at)
	})
	first := c.timers[0]
	if first.at.After(t) {
		return nil
	}
	c.timers = c.timers[1:]
	return first
}

// Next returns the due time of the earliest pending timer.
func (c *FakeClock) Next() (time.Time, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	var next time.Time
	for i, t := range c.timers {
		if i == 0 || t.at.Before(next) {
			next = t.at
		}
	}
	return next, len(c.timers) > 0
}

// AdvanceToNext moves the clock to the earliest pending timer and runs every timer due
// then. It reports false, and does nothing, when no timer is pending.
func (c *FakeClock) AdvanceToNext() bool {
	next, ok := c.Next()
	if ok {
		c.AdvanceTo(next)
	}
	return ok
}

// Pending returns the number of pending timers.
func (c *FakeClock) Pending() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.timers)
}
