package lambdas

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Each row is one attempt's outcome and the decision after it.
func TestEventNext(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	d := Delays{
		AfterError:    func(n int) time.Duration { return time.Duration(n) * time.Minute },
		AfterThrottle: func(n int) time.Duration { return time.Duration(n) * time.Second },
	}
	cfg := AsyncConfig{MaxRetries: 2, MaxEventAge: 10 * time.Minute}
	cases := []struct {
		name string
		e    event
		how  attempt
		now  time.Time
		wait time.Duration
		drop string
	}{
		{name: "success", how: succeeded, now: t0},
		{name: "first error", how: functionFailed, now: t0, wait: time.Minute},                                                                                                      // retry 1 after 1 min
		{name: "second error", e: event{retries: 1}, how: functionFailed, now: t0, wait: 2 * time.Minute},                                                                           // retry 2 after 2 min
		{name: "third error", e: event{retries: 2}, how: functionFailed, now: t0, drop: "retries exhausted"},                                                                        // MaxRetries reached
		{name: "throttle", e: event{throttles: 2}, how: throttled, now: t0, wait: 3 * time.Second},                                                                                  // backs off
		{name: "throttle, many retries", e: event{retries: 2}, how: throttled, now: t0, wait: time.Second},                                                                          // throttles are not retries
		{name: "throttle at the age limit", e: event{throttles: 4}, how: throttled, now: t0.Add(9*time.Minute + 56*time.Second), wait: 0, drop: "event older than its maximum age"}, // 9:56 + 5 s > 10 min
		{name: "error at the age limit", how: functionFailed, now: t0.Add(9*time.Minute + 1*time.Second), drop: "event older than its maximum age"},                                 // 9:01 + 1 min > 10 min
		{name: "error just within the age", how: functionFailed, now: t0.Add(9 * time.Minute), wait: time.Minute},                                                                   // 9:00 + 1 min = 10 min
	}
	for _, c := range cases {
		e := c.e
		e.queued = t0
		wait, drop := e.next(cfg, d, c.how, c.now)
		if wait != c.wait || drop != c.drop {
			t.Errorf("%s: wait %s, drop %q; want %s, %q", c.name, wait, drop, c.wait, c.drop)
		}
	}
}

// A failing event runs 1 + MaxRetries times, then is dropped and counted.
func TestInvokeAsync_RetriesThenDrops(t *testing.T) {
	fn := testFunction(t, "failing")
	fn.Async = AsyncConfig{MaxRetries: 2, MaxEventAge: time.Hour}
	ok := testFunction(t, "ok")
	r := newRuntime(t, 4, fn, ok)
	if err := r.InvokeAsync("failing", []byte(`{"op":"fail"}`)); err != nil {
		t.Fatal(err)
	}
	if err := r.InvokeAsync(ok.ARN, []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return r.Dropped() == 1 })
	if n := starts(t, r, "failing"); n != 3 {
		t.Errorf("the failing event ran %d times, want 3", n)
	}
	waitFor(t, func() bool { return starts(t, r, "ok") == 1 })
	time.Sleep(100 * time.Millisecond)
	if n, d := starts(t, r, "ok"), r.Dropped(); n != 1 || d != 1 {
		t.Errorf("the good event ran %d times (want 1), %d dropped (want 1)", n, d)
	}
}

// A throttled event is retried until its maximum age, then dropped
// without ever running.
func TestInvokeAsync_ThrottledUntilMaxAge(t *testing.T) {
	fn := testFunction(t, "throttled")
	fn.ReservedConcurrency = 0
	fn.Async = AsyncConfig{MaxRetries: 2, MaxEventAge: time.Minute}
	r := newRuntime(t, 4, fn)
	clock := &steppingClock{now: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC), step: 10 * time.Second}
	r.Now = clock.Now
	if err := r.InvokeAsync("throttled", []byte(`{}`)); err != nil {
		t.Fatal(err)
	}
	waitFor(t, func() bool { return r.Dropped() == 1 })
	// Queued at 0 s, then a throttle at each reading, 10 s, 20 s, ... 60 s:
	// the sixth's next attempt would be at 60 s + 10 ms, past the minute.
	if n := clock.reads(); n != 7 {
		t.Errorf("%d clock readings, want 7 (queueing and 6 throttles)", n)
	}
	if n := starts(t, r, "throttled"); n != 0 {
		t.Errorf("a function with reserved concurrency 0 ran %d times", n)
	}
}

// steppingClock moves on by step at each reading.
type steppingClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
	n    int
}

func (c *steppingClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.now.Add(time.Duration(c.n) * c.step)
	c.n++
	return t
}

func (c *steppingClock) reads() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.n
}

// starts counts a function's invocations in its log (RIE's START lines).
func starts(t *testing.T, r *Runtime, name string) int {
	t.Helper()
	log, err := os.ReadFile(filepath.Join(r.LogDir, name+".log"))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Count(string(log), "START RequestId:")
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if cond() {
			return
		}
	}
	t.Fatal("condition not met within 10 s")
}
