package engine

import (
	"testing"
	"time"

	"github.com/myriarch/myriarch/core/policy"
	"github.com/myriarch/myriarch/core/rollout"
)

// The ends of health waits within HealthWaitGather of the first are acted
// on together; any other deadline is kept to the instant and wins when it
// comes first.
func TestDeadline_GathersHealthWaitEnds(t *testing.T) {
	now := t0
	at := func(d time.Duration) time.Time { return now.Add(d) }
	cases := []struct {
		name string
		hard []time.Duration
		ends []time.Duration
		want time.Duration // 0: none
	}{
		{name: "nothing", want: 0},
		{name: "one end", ends: []time.Duration{10 * time.Second}, want: 10 * time.Second},
		{name: "ends within the gather, in any order", ends: []time.Duration{11 * time.Second, 15 * time.Second, 10200 * time.Millisecond}, want: 15 * time.Second},
		{name: "an end past the gather waits for the next evaluation", ends: []time.Duration{10 * time.Second, 15 * time.Second, 15001 * time.Millisecond}, want: 15 * time.Second},
		{name: "a later deadline changes nothing", hard: []time.Duration{30 * time.Second}, ends: []time.Duration{10 * time.Second, 11 * time.Second}, want: 11 * time.Second},
		{name: "a deadline inside the gather comes first", hard: []time.Duration{10500 * time.Millisecond}, ends: []time.Duration{10 * time.Second, 11 * time.Second}, want: 10500 * time.Millisecond},
		{name: "a deadline before the first end", hard: []time.Duration{5 * time.Second}, ends: []time.Duration{10 * time.Second}, want: 5 * time.Second},
		{name: "ends at or before now are no deadline", ends: []time.Duration{0, -time.Second}, want: 0},
		{name: "deadlines alone", hard: []time.Duration{20 * time.Second, 7 * time.Second}, want: 7 * time.Second},
	}
	for _, c := range cases {
		d := deadline{now: now}
		for _, h := range c.hard {
			d.at(at(h))
		}
		for _, e := range c.ends {
			d.end(at(e))
		}
		want := time.Time{}
		if c.want != 0 {
			want = at(c.want)
		}
		if got := d.next(); !got.Equal(want) {
			t.Errorf("%s: next %s, want %s", c.name, got, want)
		}
	}
}

// A wave whose agents applied over 5.5 s: the evaluation after the first
// end waits for the end 3 s later and lets both succeed; the end 5.5 s
// after the first, beyond the gather, gets an evaluation of its own. No
// target succeeds before its wait ended.
func TestTick_HealthWaitEndsGathered(t *testing.T) {
	f := newFixture(t, policy.KindConfig, snap(policy.KindConfig, func(s *policy.Spec) { s.HealthWait = time.Minute }), []string{"a", "b", "c"})
	f.tick()
	f.advance(10 * time.Second)
	f.apply("a")
	f.tick()
	f.advance(3 * time.Second)
	f.apply("b")
	f.tick()
	f.advance(2500 * time.Millisecond)
	f.apply("c")
	f.tick()
	endA := *f.target("a").VerifiedAt
	endA = endA.Add(time.Minute)
	f.wantDeadline(endA.Add(3 * time.Second)) // b's end, 3 s after a's
	f.now = endA
	f.tick()
	f.wantTarget("a", rollout.TargetSucceeded)
	f.wantTarget("b", rollout.TargetVerifying) // its wait has not ended
	f.now = endA.Add(3 * time.Second)
	f.tick()
	f.wantTarget("b", rollout.TargetSucceeded)
	f.wantTarget("c", rollout.TargetVerifying)
	f.wantDeadline(endA.Add(5500 * time.Millisecond)) // c's, beyond the gather of a's
}
