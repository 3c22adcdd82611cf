package engine

import "time"

// deadline keeps the earliest moment after now at which the rollout can
// change without an agent event or a person. Moments at or before now are
// dropped: the evaluation already acted on them, and a deadline in the past would
// make the state machine evaluate again at once, in a loop, until something
// changes (a collector still starting after its health wait ended, say).
type deadline struct {
	now time.Time
	t   time.Time
}

// at records t if it lies after now and is the earliest so far.
func (d *deadline) at(t time.Time) {
	if t.IsZero() || !t.After(d.now) {
		return
	}
	if d.t.IsZero() || t.Before(d.t) {
		d.t = t
	}
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
