package engine

import (
	"slices"
	"time"
)

// deadline keeps the earliest moment after now at which the rollout can
// change without an agent event or a person. Moments at or before now are
// dropped: the evaluation already acted on them, and a deadline in the past would
// make the state machine evaluate again at once, in a loop, until something
// changes (a collector still starting after its health wait ended, say).
type deadline struct {
	now  time.Time
	t    time.Time
	ends []time.Time // ends of health waits, after now (end)
}

// HealthWaitGather is how much later than its end a health wait may be
// acted on, so that the ends of a wave's waits, which follow its agents'
// reports over a few seconds, are acted on by one evaluation instead of
// one for each whole second they spread over. Each of those evaluations
// reads every target and every agent in flight: a wave of 1,000 whose
// reports came over 2 to 3 s evaluated the whole rollout two or three
// times to end its waits with a gather of 2 s (docs/scale.md). Within the
// tick the engine's rules allow: a target finishes up to one tick (5 s by
// default) after its wait ended. The wave itself ends no later: its last
// wait's end is the deadline.
const HealthWaitGather = 5 * time.Second

// at records t if it lies after now and is the earliest so far.
func (d *deadline) at(t time.Time) {
	if t.IsZero() || !t.After(d.now) {
		return
	}
	if d.t.IsZero() || t.Before(d.t) {
		d.t = t
	}
}

// end records the end of a health wait: a deadline that may wait for the
// ends that follow it within HealthWaitGather (next).
func (d *deadline) end(t time.Time) {
	if t.After(d.now) {
		d.ends = append(d.ends, t)
	}
}

// next is the moment to evaluate again: the earliest deadline, or, when
// that is the end of a health wait, the last end within HealthWaitGather
// of it, unless another deadline comes first. Example: ends at :10.2,
// :11.0, :15.0 and :15.5 and an applyTimeout at :30 → :15.0 (the first
// waits 4.8 s; :15.5 waits for the evaluation after); with an applyTimeout
// at :11.5 → :11.5.
func (d *deadline) next() time.Time {
	if len(d.ends) == 0 {
		return d.t
	}
	first := slices.MinFunc(d.ends, time.Time.Compare)
	if !d.t.IsZero() && !d.t.After(first) {
		return d.t
	}
	last := first
	for _, e := range d.ends {
		if e.After(last) && !e.After(first.Add(HealthWaitGather)) {
			last = e
		}
	}
	if !d.t.IsZero() && d.t.Before(last) {
		return d.t
	}
	return last
}

// WholeSecondAfter rounds t up to a whole second. Step Functions keeps only
// the whole seconds of a Wait state's timestamp, so the state machine asks
// for deadlines rounded up (a deadline of 12:00:00.400 would wake it at
// 12:00:00, before it, and the evaluation would ask for it again), and a
// bake and its gate begin on a whole second: with readings on whole seconds
// too, a wake-up rounded up is never late for one. Example: 12:00:00.400 →
// 12:00:01; 12:00:00 stays.
func WholeSecondAfter(t time.Time) time.Time {
	if w := t.Truncate(time.Second); w.Before(t) {
		return w.Add(time.Second)
	}
	return t
}
