package schedule

import (
	"context"
	"errors"
	"regexp"
	"sync"
	"testing"
	"time"

	"github.com/myriarch/myriarch/local/localcloud/lambdas"
)

// fakeTicks hands the scheduler tickers the test drives, by period.
type fakeTicks struct {
	mu      sync.Mutex
	tickers map[time.Duration]chan time.Time
	stopped int
}

func (f *fakeTicks) tick(d time.Duration) (<-chan time.Time, func()) {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := make(chan time.Time)
	f.tickers[d] = c
	return c, func() { f.mu.Lock(); f.stopped++; f.mu.Unlock() }
}

func (f *fakeTicks) ticker(t *testing.T, d time.Duration) chan time.Time {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(time.Millisecond) {
		f.mu.Lock()
		c := f.tickers[d]
		f.mu.Unlock()
		if c != nil {
			return c
		}
	}
	t.Fatalf("no ticker of %s", d)
	return nil
}

// invocations records the asynchronous invocations, answering with the
// errors of refuse in turn, then nil.
type invocations struct {
	mu      sync.Mutex
	arns    []string
	events  [][]byte
	refuse  []error
	changed chan struct{}
}

func newInvocations(refuse ...error) *invocations {
	return &invocations{refuse: refuse, changed: make(chan struct{}, 100)}
}

func (iv *invocations) invoke(arn string, payload []byte) error {
	iv.mu.Lock()
	defer func() { iv.mu.Unlock(); iv.changed <- struct{}{} }()
	iv.arns = append(iv.arns, arn)
	iv.events = append(iv.events, payload)
	if len(iv.refuse) > 0 {
		err := iv.refuse[0]
		iv.refuse = iv.refuse[1:]
		return err
	}
	return nil
}

func (iv *invocations) count() int {
	iv.mu.Lock()
	defer iv.mu.Unlock()
	return len(iv.arns)
}

func (iv *invocations) waitCount(t *testing.T, n int) {
	t.Helper()
	for deadline := time.After(5 * time.Second); iv.count() < n; {
		select {
		case <-iv.changed:
		case <-deadline:
			t.Fatalf("%d invocations, want %d", iv.count(), n)
		}
	}
}

const plannerARN = "arn:aws:lambda:us-east-1:123456789012:function:planner"

func planner(retry RetryPolicy) Rule {
	return Rule{LogicalID: "PlannerSchedule", ARN: "arn:aws:events:us-east-1:123456789012:rule/planner", Period: time.Minute, Enabled: true,
		Targets: []Target{{ID: "T0", Arn: plannerARN, Retry: retry}}}
}

// start runs a scheduler until the test ends.
func start(t *testing.T, s *Scheduler) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
}

// Each tick of an enabled rule is one Scheduled Event, as EventBridge
// sends it, to each target; a disabled rule gets no ticker and runs
// nothing; Every replaces a rule's period.
func TestScheduler_FiresScheduledEvents(t *testing.T) {
	ticks := &fakeTicks{tickers: map[time.Duration]chan time.Time{}}
	iv := newInvocations()
	disabled := Rule{LogicalID: "Releases", Period: 24 * time.Hour, Targets: []Target{{ID: "T0", Arn: "arn:aws:lambda:us-east-1:123456789012:function:releases"}}}
	watchdog := Rule{LogicalID: "Watchdog", ARN: "arn:aws:events:us-east-1:123456789012:rule/watchdog", Period: 5 * time.Minute, Enabled: true,
		Targets: []Target{{ID: "T0", Arn: "arn:aws:lambda:us-east-1:123456789012:function:watchdog", Input: `{"constant":1}`}}}
	s := &Scheduler{
		Rules: []Rule{planner(RetryPolicy{}), disabled, watchdog}, Account: "123456789012", Region: "us-east-1",
		InvokeAsync: iv.invoke, Tick: ticks.tick, Every: map[string]time.Duration{"Watchdog": 50 * time.Millisecond},
	}
	start(t, s)
	at := time.Date(2026, 3, 1, 12, 0, 0, 500_000_000, time.UTC)
	ticks.ticker(t, time.Minute) <- at
	iv.waitCount(t, 1)
	ticks.ticker(t, 50*time.Millisecond) <- at // the watchdog, accelerated
	iv.waitCount(t, 2)

	iv.mu.Lock()
	defer iv.mu.Unlock()
	if iv.arns[0] != plannerARN {
		t.Errorf("invoked %s", iv.arns[0])
	}
	id := regexp.MustCompile(`"id":"([0-9a-f-]{36})"`).FindSubmatch(iv.events[0])
	if id == nil {
		t.Fatalf("no event id in %s", iv.events[0])
	}
	want := `{"version":"0","id":"` + string(id[1]) + `","detail-type":"Scheduled Event","source":"aws.events","account":"123456789012",` +
		`"time":"2026-03-01T12:00:00Z","region":"us-east-1","resources":["arn:aws:events:us-east-1:123456789012:rule/planner"],"detail":{}}`
	if string(iv.events[0]) != want {
		t.Errorf("event\n got %s\nwant %s", iv.events[0], want)
	}
	if string(iv.events[1]) != `{"constant":1}` {
		t.Errorf("a target's Input replaces the event: %s", iv.events[1])
	}
	ticks.mu.Lock()
	defer ticks.mu.Unlock()
	if _, ok := ticks.tickers[24*time.Hour]; ok || len(ticks.tickers) != 2 {
		t.Errorf("tickers %v: the disabled rule got one", ticks.tickers)
	}
}

// A refused delivery is retried per the target's RetryPolicy: up to
// MaxRetries, while the event is younger than MaxEventAge; a missing
// function is not retried.
func TestScheduler_RetryPolicy(t *testing.T) {
	throttled := &lambdas.ThrottledError{Function: "planner"}
	cases := []struct {
		name     string
		retry    RetryPolicy
		refuse   []error
		attempts int
		dropped  int64
	}{
		{name: "accepted after retries", retry: RetryPolicy{MaxRetries: 2, MaxEventAge: time.Hour}, refuse: []error{throttled, throttled}, attempts: 3, dropped: 0},
		{name: "retries exhausted", retry: RetryPolicy{MaxRetries: 1, MaxEventAge: time.Hour}, refuse: []error{throttled, throttled}, attempts: 2, dropped: 1},
		{name: "no retries", retry: RetryPolicy{MaxRetries: 0, MaxEventAge: time.Minute}, refuse: []error{throttled}, attempts: 1, dropped: 1},
		{name: "not retriable", retry: RetryPolicy{MaxRetries: 5, MaxEventAge: time.Hour}, refuse: []error{&lambdas.NotFoundError{Function: "planner"}}, attempts: 1, dropped: 1},
		{name: "service failure", retry: RetryPolicy{MaxRetries: 5, MaxEventAge: time.Hour}, refuse: []error{errors.New("connection refused")}, attempts: 2, dropped: 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ticks := &fakeTicks{tickers: map[time.Duration]chan time.Time{}}
			iv := newInvocations(c.refuse...)
			s := &Scheduler{Rules: []Rule{planner(c.retry)}, InvokeAsync: iv.invoke, Tick: ticks.tick,
				Backoff: func(int) time.Duration { return time.Millisecond }}
			start(t, s)
			ticks.ticker(t, time.Minute) <- time.Now()
			iv.waitCount(t, c.attempts)
			time.Sleep(30 * time.Millisecond)
			if n, d := iv.count(), s.Dropped(); n != c.attempts || d != c.dropped {
				t.Errorf("%d attempts, %d dropped; want %d, %d", n, d, c.attempts, c.dropped)
			}
		})
	}
}

// Each row is a refusal and whether it is retried.
func TestDecide(t *testing.T) {
	fired := time.Date(2026, 1, 1, 12, 0, 0, 0, time.UTC)
	p := RetryPolicy{MaxRetries: 3, MaxEventAge: time.Minute}
	backoff := func(n int) time.Duration { return time.Duration(n) * time.Second }
	cases := []struct {
		name      string
		n         int
		retriable bool
		now       time.Time
		wait      time.Duration
		retry     bool
	}{
		{name: "first retry", n: 1, retriable: true, now: fired, wait: time.Second, retry: true},
		{name: "last retry", n: 3, retriable: true, now: fired, wait: 3 * time.Second, retry: true},
		{name: "past MaxRetries", n: 4, retriable: true, now: fired},
		{name: "not retriable", n: 1, now: fired},
		{name: "too old then", n: 2, retriable: true, now: fired.Add(59 * time.Second)},                                      // 59 s + 2 s > 60 s
		{name: "just young enough", n: 1, retriable: true, now: fired.Add(59 * time.Second), wait: time.Second, retry: true}, // 60 s
	}
	for _, c := range cases {
		wait, retry := decide(p, c.n, c.retriable, fired, c.now, backoff)
		if wait != c.wait || retry != c.retry {
			t.Errorf("%s: %s %v, want %s %v", c.name, wait, retry, c.wait, c.retry)
		}
	}
}
