package predict

import (
	"math"
	"time"
)

// When is a predicted moment: an instant (At), or, after a wave's approval
// whose moment nobody knows, an offset from it. An approval is a wait of
// unknown length, so every moment after it is told relative to it:
// {"afterApprovalOf": 1, "offsetSeconds": 600} is ten minutes after wave 1
// is approved. After two approvals the later moments count from the later.
type When struct {
	At              *time.Time `json:"at,omitempty"`
	AfterApprovalOf *int       `json:"afterApprovalOf,omitempty"`
	OffsetSeconds   *int64     `json:"offsetSeconds,omitempty"`
}

// At is the instant t, in UTC.
func At(t time.Time) When {
	u := t.UTC()
	return When{At: &u}
}

// AfterApproval is d after the approval of wave w, in whole seconds
// (rounded: 89.6s is 90).
func AfterApproval(w int, d time.Duration) When {
	s := int64(math.Round(d.Seconds()))
	return When{AfterApprovalOf: &w, OffsetSeconds: &s}
}

// atLatest is d after the approval of wave w in whole seconds rounded up
// (89.2s is 90), for a bound that must not come before the moment.
func atLatest(w int, d time.Duration) When {
	s := int64(math.Ceil(d.Seconds()))
	return When{AfterApprovalOf: &w, OffsetSeconds: &s}
}

// Resolve is the instant of w given the moments of the approvals it may
// count from (by wave index); ok is false for an offset from an approval
// approvedAt lacks.
func (w When) Resolve(approvedAt map[int]time.Time) (t time.Time, ok bool) {
	switch {
	case w.At != nil:
		return *w.At, true
	case w.AfterApprovalOf != nil && w.OffsetSeconds != nil:
		a, ok := approvedAt[*w.AfterApprovalOf]
		return a.Add(time.Duration(*w.OffsetSeconds) * time.Second), ok
	}
	return time.Time{}, false
}

// clock is the virtual clock of a simulation with the approvals so far:
// it tells a moment as an instant until the first approval, then as an
// offset from the latest one.
type clock struct {
	now      time.Time
	anchor   int // the wave of the latest approval; -1 before any
	anchorAt time.Time
	bound    bool // offsets round up: the pessimistic run's moments are bounds
}

func newClock(now time.Time) clock { return clock{now: now, anchor: -1} }

// when is the moment t (at or after the latest approval).
func (c clock) when(t time.Time) When {
	switch {
	case c.anchor < 0:
		return At(t)
	case c.bound:
		return atLatest(c.anchor, t.Sub(c.anchorAt))
	}
	return AfterApproval(c.anchor, t.Sub(c.anchorAt))
}

// approved makes the approval of wave w, now, the moment later ones count from.
func (c *clock) approved(w int) { c.anchor, c.anchorAt = w, c.now }
