package agent

import (
	"maps"
	"reflect"
	"time"
)

// Decisive is the agent without the fields that no engine decision reads:
// lastSeen (a heartbeat's), the effective configuration's hash
// (informational: the reported hash decides), and what the agent is asked
// to run (desiredHash, targetVersion, packageOffer), which the
// evaluations' own orders and the planner write. A change of anything
// else (a report, a connection, a new fleet) may move a target.
func (a Agent) Decisive() Agent {
	a.LastSeen, a.EffectiveHash = time.Time{}, ""
	a.DesiredHash, a.TargetVersion, a.PackageOffer = "", "", ""
	return a
}

// Written is what one write of an agent changed, as its writer knew it:
// the writer has the agent as it was (it writes on the version it read),
// so the agent-event path needs only the agent as written, not both.
type Written struct {
	// Stamped says the writer said what changed. A write that says nothing
	// (an item of an older build, or a delete) counts as changing everything.
	Stamped bool
	// Decisive: a fact an engine decision reads changed (Decisive), or the
	// agent is new.
	Decisive bool
	// Attributes: the attributes changed, or the agent is new: its fleet
	// may change.
	Attributes bool
	// PrevFleet and PrevCollector are the fleet and the linked collector
	// before the write, when it changed them ("" otherwise).
	PrevFleet, PrevCollector string
}

// WrittenBetween is what a write from old to new changed; old nil is a new
// agent, new nil a deleted one.
func WrittenBetween(old, new *Agent) Written {
	w := Written{Stamped: true, Decisive: true, Attributes: true}
	switch {
	case old == nil:
		return w
	case new == nil:
		w.PrevFleet, w.PrevCollector = old.Fleet, old.LinkedCollector()
		return w
	}
	return WrittenOver(!reflect.DeepEqual(old.Decisive(), new.Decisive()), old.Attributes, old.Fleet, *new)
}

// WrittenOver is what a write of new changed, given what its writer knew of
// the agent it replaced: whether a decisive fact changed (compared as the
// writer can: both agents, or a fingerprint of the old one), and the old
// attributes and fleet.
func WrittenOver(decisive bool, attributes map[string]string, fleet string, new Agent) Written {
	w := Written{Stamped: true, Decisive: decisive, Attributes: !maps.Equal(attributes, new.Attributes)}
	if fleet != new.Fleet {
		w.PrevFleet = fleet
	}
	if c := (Agent{Attributes: attributes}).LinkedCollector(); c != new.LinkedCollector() {
		w.PrevCollector = c
	}
	return w
}
