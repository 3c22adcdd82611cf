package engine

import "time"

// deadline keeps the earliest moment after now at which the rollout can
// change without an agent event or a person. Moments at or before now are
// dropped: the pass already acted on them, and a deadline in the past would
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
