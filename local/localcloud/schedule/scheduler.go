package schedule

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"sync"
	"sync/atomic"
	"time"

	"github.com/google/uuid"

	"github.com/myriarch/myriarch/local/localcloud/lambdas"
)

// Scheduler runs rules. Run may be called once.
type Scheduler struct {
	Rules           []Rule
	Account, Region string // the template's, for the events
	// InvokeAsync queues an invocation of a function (lambdas.Runtime's):
	// EventBridge invokes Lambda targets asynchronously.
	InvokeAsync func(functionARN string, payload []byte) error
	// Every runs a rule at another period than its rate, by logical id: a
	// local-only acceleration (tests, demos), which EventBridge has not.
	Every map[string]time.Duration
	// Tick starts a ticker of period d (default time.NewTicker's); stop
	// ends it. Tests drive the schedule through it.
	Tick func(d time.Duration) (ticks <-chan time.Time, stop func())
	Now  func() time.Time // events' ages; default time.Now
	// Backoff is the wait before retry n (1, 2, ...) of a refused
	// delivery; default 1 s doubling up to 1 minute.
	Backoff func(n int) time.Duration
	Log     *slog.Logger

	running sync.WaitGroup
	dropped atomic.Int64
}

// Run fires the enabled rules until ctx ends, then waits for the
// deliveries under way.
func (s *Scheduler) Run(ctx context.Context) error {
	s.defaults()
	defer s.running.Wait()
	for _, r := range s.Rules {
		if !r.Enabled {
			s.Log.Info("rule disabled: not scheduled", "rule", r.LogicalID)
			continue
		}
		period := r.Period
		if d, ok := s.Every[r.LogicalID]; ok && d > 0 {
			period = d
		}
		ticks, stop := s.Tick(period)
		s.running.Add(1)
		go func() {
			defer s.running.Done()
			defer stop()
			for {
				select {
				case at := <-ticks:
					s.fire(ctx, r, at)
				case <-ctx.Done():
					return
				}
			}
		}()
	}
	<-ctx.Done()
	return nil
}

func (s *Scheduler) defaults() {
	if s.Tick == nil {
		s.Tick = func(d time.Duration) (<-chan time.Time, func()) {
			t := time.NewTicker(d)
			return t.C, t.Stop
		}
	}
	if s.Now == nil {
		s.Now = time.Now
	}
	if s.Backoff == nil {
		s.Backoff = func(n int) time.Duration { return min(time.Second<<min(n-1, 6), time.Minute) }
	}
	if s.Log == nil {
		s.Log = slog.Default()
	}
}

// fire delivers one scheduled event to every target of the rule.
func (s *Scheduler) fire(ctx context.Context, r Rule, at time.Time) {
	event := scheduledEvent(r, s.Account, s.Region, at)
	for _, tg := range r.Targets {
		payload := event
		if tg.Input != "" {
			payload = []byte(tg.Input)
		}
		s.running.Add(1)
		go func() {
			defer s.running.Done()
			s.deliver(ctx, r, tg, payload, at)
		}()
	}
}

// deliver hands the event to the target, retrying a refusal per the
// target's RetryPolicy. Lambda accepts an asynchronous invocation and
// retries the function itself (per its EventInvokeConfig): this policy is
// only for Lambda refusing the invocation.
func (s *Scheduler) deliver(ctx context.Context, r Rule, tg Target, payload []byte, at time.Time) {
	for attempt := 0; ; attempt++ {
		err := s.InvokeAsync(tg.Arn, payload)
		if err == nil {
			return
		}
		wait, retry := decide(tg.Retry, attempt+1, retriable(err), at, s.Now(), s.Backoff)
		if !retry {
			s.dropped.Add(1)
			s.Log.Warn("scheduled event dropped", "rule", r.LogicalID, "target", tg.ID, "attempts", attempt+1, "error", err)
			return
		}
		select {
		case <-time.After(wait):
		case <-ctx.Done():
			return
		}
	}
}

// decide says whether a refused delivery is retried, and after how long:
// retry n (1, 2, ...) happens when the error may pass, n is within
// MaxRetries, and the event will still be younger than MaxEventAge then.
// An event of 12:00:00 with MaxEventAge 60 s refused at 12:00:59 with a
// 2 s backoff is dropped (12:01:01 is past its age).
func decide(p RetryPolicy, n int, retriable bool, firedAt, now time.Time, backoff func(int) time.Duration) (time.Duration, bool) {
	if !retriable || n > p.MaxRetries {
		return 0, false
	}
	wait := backoff(n)
	if now.Add(wait).Sub(firedAt) > p.MaxEventAge {
		return 0, false
	}
	return wait, true
}

// retriable: Lambda's refusals that may pass (a throttle, a failure of
// the service), not a missing function or a payload too large.
func retriable(err error) bool {
	var notFound *lambdas.NotFoundError
	var tooLarge *lambdas.PayloadTooLargeError
	return !errors.As(err, &notFound) && !errors.As(err, &tooLarge)
}

// Dropped counts the events no target accepted in time.
func (s *Scheduler) Dropped() int64 { return s.dropped.Load() }

// event is EventBridge's Scheduled Event, its fields in EventBridge's
// order.
type event struct {
	Version    string          `json:"version"`
	ID         string          `json:"id"`
	DetailType string          `json:"detail-type"`
	Source     string          `json:"source"`
	Account    string          `json:"account"`
	Time       string          `json:"time"`
	Region     string          `json:"region"`
	Resources  []string        `json:"resources"`
	Detail     json.RawMessage `json:"detail"`
}

func scheduledEvent(r Rule, account, region string, at time.Time) []byte {
	b, _ := json.Marshal(event{
		Version: "0", ID: uuid.NewString(), DetailType: "Scheduled Event", Source: "aws.events",
		Account: account, Time: at.UTC().Format(time.RFC3339), Region: region,
		Resources: []string{r.ARN}, Detail: json.RawMessage(`{}`),
	})
	return b
}
