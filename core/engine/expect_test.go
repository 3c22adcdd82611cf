package engine

import (
	"maps"
	"reflect"
	"slices"
	"time"

	"github.com/myriarch/myriarch/core/rollout"
)

// passExpectation is everything one pass decided, asserted at once (after
// Nomad's resultExpectation): an extra order, change or event fails the
// test as surely as a missing one.
type passExpectation struct {
	starts, resets, cancels []string                        // agent ids of the orders, sorted
	changed                 map[string]rollout.TargetStatus // the targets the pass changed, with their status after it
	events                  []string                        // event types, in order
	deadline                time.Time                       // zero: none
	gatesDue                []GateDue
}

// wantPass compares the fixture's last pass with e as a whole.
func (f *fixture) wantPass(e passExpectation) {
	f.t.Helper()
	res := f.last
	got := passExpectation{changed: map[string]rollout.TargetStatus{}, deadline: res.NextDeadline, gatesDue: res.GatesDue}
	for _, o := range res.Orders {
		switch o.Kind {
		case OrderStart:
			got.starts = append(got.starts, o.AgentID)
		case OrderReset:
			got.resets = append(got.resets, o.AgentID)
		case OrderCancel:
			got.cancels = append(got.cancels, o.AgentID)
		}
	}
	for _, c := range res.Changed {
		got.changed[c.AgentID] = c.Status
	}
	for _, ev := range res.Events {
		got.events = append(got.events, ev.Type)
	}
	for _, ids := range [][]string{got.starts, got.resets, got.cancels, e.starts, e.resets, e.cancels} {
		slices.Sort(ids)
	}
	if e.changed == nil {
		e.changed = map[string]rollout.TargetStatus{}
	}
	same := slices.Equal(got.starts, e.starts) && slices.Equal(got.resets, e.resets) && slices.Equal(got.cancels, e.cancels) &&
		maps.Equal(got.changed, e.changed) && slices.Equal(got.events, e.events) && got.deadline.Equal(e.deadline) &&
		reflect.DeepEqual(emptyIfNil(got.gatesDue), emptyIfNil(e.gatesDue))
	if !same {
		f.t.Fatalf("pass at +%s:\n got starts %v resets %v cancels %v changed %v events %v deadline %s gates %v\nwant starts %v resets %v cancels %v changed %v events %v deadline %s gates %v",
			f.now.Sub(t0), got.starts, got.resets, got.cancels, got.changed, got.events, sinceT0(got.deadline), got.gatesDue,
			e.starts, e.resets, e.cancels, e.changed, e.events, sinceT0(e.deadline), e.gatesDue)
	}
}

func emptyIfNil(ds []GateDue) []GateDue {
	if ds == nil {
		return []GateDue{}
	}
	return ds
}

func sinceT0(t time.Time) string {
	if t.IsZero() {
		return "none"
	}
	return "+" + t.Sub(t0).String()
}
